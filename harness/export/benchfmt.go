// Package export writes results in formats other tools read: CSV for
// spreadsheets and data frames, and the Go benchmark format (benchfmt) so
// benchstat works unchanged on xbench results. It only reformats; nothing
// here summarises samples.
package export

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/xbench/xbench/harness/result"
)

// BenchName is a result's benchmark name in the Go format, with the
// configuration as sub-benchmark keys:
//
//	TTT/backend=pytorch/size=125m/ttt=linear/phase=forward/dtype=float32/batch=4/seq=512/k=16/backbone=transformer
//
// The backend is a key too, so `benchstat -col /backend` compares backends
// within one run and plain `benchstat old.txt new.txt` compares two runs
// backend by backend. A variant's "/" becomes "+", since "/" separates keys.
func BenchName(backendName string, c result.Config) string {
	backbone := c.Backbone
	if backbone == "" {
		backbone = "transformer"
	}
	return fmt.Sprintf("TTT/backend=%s/size=%s/ttt=%s/phase=%s/dtype=%s/batch=%d/seq=%d/k=%d/backbone=%s",
		strings.ReplaceAll(backendName, "/", "+"), c.ModelSize, c.TTTType, c.Phase(), c.Dtype, c.Batch, c.SeqLen, c.MiniBatch, backbone)
}

// Benchfmt writes one benchmark line per sample (iterations 1), in
// sec/op as benchstat expects (written ns/op), plus tokens/s per sample and
// the peak memory when the backend reported it. File configuration keys
// carry only what must match for two runs to be comparable (workload and
// device), because benchstat puts differing file keys in separate tables.
// Results without samples (oom, unsupported, failed) cannot be expressed in
// the format and are counted in skipped.
func Benchfmt(w io.Writer, rs []result.Result) (skipped int, err error) {
	bw := benchfmt.NewWriter(w)
	if err := bw.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "tokens/s", Key: "better"},
		OrigUnit: "tokens/s", Value: "higher"}); err != nil {
		return 0, fmt.Errorf("write benchfmt: %w", err)
	}
	for _, r := range rs {
		if r.Status != result.StatusOK || len(r.SamplesMs) == 0 {
			skipped++
			continue
		}
		dev := r.Device.Kind
		if r.Device.Name != "" {
			dev += " " + r.Device.Name
		}
		res := &benchfmt.Result{
			Config: []benchfmt.Config{
				{Key: "workload", Value: []byte(r.Config.Workload), File: true},
				{Key: "device", Value: []byte(dev), File: true},
			},
			Name:  benchfmt.Name(BenchName(r.Backend, r.Config)),
			Iters: 1,
		}
		for _, ms := range r.SamplesMs {
			res.Values = append(res.Values[:0], benchfmt.Value{Value: ms * 1e6, Unit: "ns/op"})
			if ms > 0 {
				res.Values = append(res.Values, benchfmt.Value{Value: float64(r.Config.Tokens()) / (ms / 1000), Unit: "tokens/s"})
			}
			if r.PeakMemoryBytes > 0 {
				res.Values = append(res.Values, benchfmt.Value{Value: float64(r.PeakMemoryBytes), Unit: "peak-B"})
			}
			if err := bw.Write(res); err != nil {
				return skipped, fmt.Errorf("write benchfmt %s: %w", BenchName(r.Backend, r.Config), err)
			}
		}
	}
	return skipped, nil
}

// ftoa prints a float without losing precision or adding noise.
func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
