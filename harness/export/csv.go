package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// CSVHeader names the columns of CSV, one row per result. flops and bytes
// are ttt.CostOf, achieved_tflops is flops over the median.
var CSVHeader = []string{
	"run_id", "backend", "status", "workload", "model_size", "ttt_type", "phase", "dtype", "batch", "seq_len",
	"mini_batch", "backbone", "device_kind", "device_name", "n", "median_ms", "mean_ms", "std_ms", "min_ms",
	"max_ms", "p10_ms", "p90_ms", "ci95_low_ms", "ci95_high_ms", "cv", "tokens_per_s", "peak_memory_bytes",
	"compile_ms", "num_params", "flops", "bytes", "achieved_tflops", "timestamp", "git_commit", "message", "samples_ms",
}

// CSV writes a header and one row per result. Summary columns are empty
// for results without samples; samples_ms holds every sample, separated
// by spaces, so nothing is lost.
func CSV(w io.Writer, rs []result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range rs {
		c := r.Config
		row := []string{r.RunID, r.Backend, string(r.Status), c.Workload, c.ModelSize, c.TTTType, c.Phase(), c.Dtype,
			strconv.Itoa(c.Batch), strconv.Itoa(c.SeqLen), strconv.Itoa(c.MiniBatch), c.Backbone,
			r.Device.Kind, r.Device.Name, strconv.Itoa(len(r.SamplesMs))}
		if s := r.Stats; s != nil {
			row = append(row, ftoa(s.MedianMs), ftoa(s.MeanMs), ftoa(s.StdMs), ftoa(s.MinMs), ftoa(s.MaxMs),
				ftoa(s.P10Ms), ftoa(s.P90Ms), ftoa(s.CI95LowMs), ftoa(s.CI95HighMs), ftoa(s.CV), ftoa(r.TokensPerS))
		} else {
			row = append(row, make([]string, 11)...)
		}
		row = append(row, strconv.FormatInt(r.PeakMemoryBytes, 10), ftoa(r.CompileMs), strconv.FormatInt(r.NumParams, 10))
		if cost, err := ttt.CostOf(c); err == nil {
			achieved := ""
			if r.Stats != nil && r.Stats.MedianMs > 0 {
				achieved = ftoa(cost.FLOPs / (r.Stats.MedianMs / 1000) / 1e12)
			}
			row = append(row, ftoa(cost.FLOPs), ftoa(cost.Bytes), achieved)
		} else {
			row = append(row, "", "", "")
		}
		samples := make([]string, len(r.SamplesMs))
		for i, s := range r.SamplesMs {
			samples[i] = ftoa(s)
		}
		row = append(row, r.Timestamp, r.Env.GitCommit, r.Message, strings.Join(samples, " "))
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write csv row %s: %w", r.Backend, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}
