package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// Fixed columns of CSV; the parameter columns of the workloads present
// stand between csvLead and csvTail, each workload's in declared order.
var (
	csvLead = []string{"run_id", "backend", "status", "workload", "phase"}
	csvTail = []string{"device_kind", "device_name", "device_count", "n_samples", "median_ms", "mean_ms", "std_ms", "min_ms",
		"max_ms", "p10_ms", "p90_ms", "ci95_low_ms", "ci95_high_ms", "cv", "throughput", "throughput_unit", "peak_memory_bytes",
		"compile_ms", "num_params", "flops", "bytes", "achieved_tflops", "timestamp", "git_commit", "message", "samples_ms"}
)

// CSVHeader names the columns of CSV for these results. flops and bytes
// are the workload's cost model, achieved_tflops is flops over the median.
func CSVHeader(rs []result.Result) []string {
	cfgs := make([]result.Config, len(rs))
	for i, r := range rs {
		cfgs[i] = r.Config
	}
	return slices.Concat(csvLead, workload.ParamColumns(cfgs), csvTail)
}

// CSV writes a header and one row per result; `xbench export --format csv`
// and `xbench sweep --csv` both print it. Summary columns and the
// throughput are empty for results without samples (never 0, which would
// read as a measurement), and so are peak_memory_bytes, compile_ms and
// num_params where such a result left them 0 (an unsupported or failed
// cell measured nothing; an oom one may still say how far it got).
// n_samples stays a count (0). samples_ms holds every sample as a JSON list
// ("[1.5,1.25]", "[]" without samples), so nothing is lost and pandas reads
// it with json.loads.
func CSV(w io.Writer, rs []result.Result) error {
	cw := csv.NewWriter(w)
	header := CSVHeader(rs)
	params := header[len(csvLead) : len(header)-len(csvTail)]
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range rs {
		c := r.Config
		row := []string{r.RunID, r.Backend, string(r.Status), c.Workload, c.Phase}
		for _, k := range params {
			row = append(row, c.Params[k])
		}
		row = append(row, r.Device.Kind, r.Device.Name, strconv.Itoa(r.Device.Count), strconv.Itoa(len(r.SamplesMs)))
		if s := r.Stats; s != nil {
			row = append(row, ftoa(s.MedianMs), ftoa(s.MeanMs), ftoa(s.StdMs), ftoa(s.MinMs), ftoa(s.MaxMs),
				ftoa(s.P10Ms), ftoa(s.P90Ms), ftoa(s.CI95LowMs), ftoa(s.CI95HighMs), ftoa(s.CV), ftoa(r.Throughput), r.ThroughputUnit)
		} else {
			row = append(row, make([]string, 12)...)
		}
		measured := r.Stats != nil
		row = append(row, unlessUnset(strconv.FormatInt(r.PeakMemoryBytes, 10), r.PeakMemoryBytes == 0, measured),
			unlessUnset(ftoa(r.CompileMs), r.CompileMs == 0, measured),
			unlessUnset(strconv.FormatInt(r.NumParams, 10), r.NumParams == 0, measured))
		if cost, err := workload.CostOf(c); err == nil {
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
		row = append(row, r.Timestamp, r.Env.GitCommit, r.Message, "["+strings.Join(samples, ",")+"]")
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

// unlessUnset is a number's text, or empty for a 0 that a result without
// a measurement holds only because the field is required.
func unlessUnset(text string, zero, measured bool) string {
	if zero && !measured {
		return ""
	}
	return text
}
