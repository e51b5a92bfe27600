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
	"github.com/xbench/xbench/harness/workload"
)

// BenchName is a result's benchmark name in the Go format, with the
// workload in upper case and the configuration as sub-benchmark keys in the
// workload's declared order:
//
//	TTT/backend=pytorch/phase=forward/model_size=125m/ttt_type=linear/batch=1/seq_len=2048/mini_batch=16/dtype=float32/backbone=transformer
//	GEMM/backend=triton/phase=forward/m=4096/n=4096/k=4096/batch=1/layout=nn/dtype=bfloat16
//
// The backend is a key too, so `benchstat -col /backend` compares backends
// within one run and plain `benchstat old.txt new.txt` compares two runs
// backend by backend. A variant's "/" becomes "+", since "/" separates keys.
func BenchName(backendName string, c result.Config) string {
	parts := []string{strings.ToUpper(c.Workload), "backend=" + strings.ReplaceAll(backendName, "/", "+"), "phase=" + c.Phase}
	for _, k := range workload.OrderedKeys(c) {
		parts = append(parts, k+"="+strings.ReplaceAll(c.Params[k], "/", "+"))
	}
	return strings.Join(parts, "/")
}

// Benchfmt writes one benchmark line per sample (iterations 1), in
// sec/op as benchstat expects (written ns/op), plus the workload's throughput per sample and
// the peak memory when the backend reported it. File configuration keys
// carry only what must match for two runs to be comparable (workload and
// device), because benchstat puts differing file keys in separate tables.
// Results without samples (oom, unsupported, failed) cannot be expressed in
// the format and are counted in skipped.
func Benchfmt(w io.Writer, rs []result.Result) (skipped int, err error) {
	bw := benchfmt.NewWriter(w)
	declared := map[string]bool{}
	for _, r := range rs {
		if r.Status != result.StatusOK || len(r.SamplesMs) == 0 {
			skipped++
			continue
		}
		// The model and count, not the kind alone: benchstat must put an
		// H100 and an H200 in separate tables, never compare them.
		dev := r.Device.Kind
		if r.Device.Name != "" {
			dev += " " + r.Device.Label()
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
			if tp := workload.ThroughputOf(r.Config, ms); tp.Unit != "" && ms > 0 {
				if !declared[tp.Unit] {
					declared[tp.Unit] = true
					if err := bw.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: tp.Unit, Key: "better"},
						OrigUnit: tp.Unit, Value: "higher"}); err != nil {
						return skipped, fmt.Errorf("write benchfmt: %w", err)
					}
				}
				res.Values = append(res.Values, benchfmt.Value{Value: tp.Value, Unit: tp.Unit})
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
