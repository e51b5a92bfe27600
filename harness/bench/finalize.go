package bench

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/workload"
)

// Finalize stamps a result with the run's identity and computes its
// statistics from the raw samples; a result whose samples cannot be trusted
// becomes failed, with the reason.
func (s *Session) Finalize(r result.Result) result.Result {
	r.SchemaVersion = result.SchemaVersion
	r.RunID = s.RunID
	r.Timestamp = time.Now().UTC().Format(time.RFC3339)
	if r.SamplesMs == nil {
		r.SamplesMs = []float64{}
	}
	if r.Env.GitCommit == "" {
		r.Env.GitCommit = s.Meta.GitCommit
	}
	if r.Env.Host == "" {
		r.Env.Host = s.Meta.Host
	}
	if r.Env.Runner == "" {
		name, _ := backend.SplitName(r.Backend)
		r.Env.Runner = s.reg.RunnerOf(name)
	}
	if r.Env.NixRev == "" {
		r.Env.NixRev = s.Meta.NixRev
	}
	if len(s.Meta.Settings) > 0 {
		// The harness's settings beside the backend's own (the problem
		// workload's precision flags); on a clash the harness's stand.
		merged := maps.Clone(r.Env.Settings)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, s.Meta.Settings)
		r.Env.Settings = merged
	}
	if r.Env.VisibleDevices == "" {
		r.Env.VisibleDevices = s.Meta.VisibleDevices
	}
	r.Stats, r.Throughput, r.ThroughputUnit = nil, 0, ""
	r = Classify(r) // one out-of-memory classifier for run, sweep and every backend
	if r.Status != result.StatusOK {
		return r
	}
	if why := badSamples(r); why != "" {
		r.Status, r.Message = result.StatusFailed, why
		return r
	}
	st, err := stats.Summarize(r.SamplesMs)
	if err != nil {
		r.Status, r.Message = result.StatusFailed, err.Error()
		return r
	}
	r.Stats = &st
	r.Warnings = dropBackendCVWarnings(r.Warnings)
	tp := workload.ThroughputOf(r.Config, st.MedianMs)
	if math.IsNaN(tp.Value) || math.IsInf(tp.Value, 0) || tp.Value < 0 {
		// A derived number that cannot be true is never saved as ok.
		r.Status, r.Message, r.Stats = result.StatusFailed, fmt.Sprintf("throughput %v %s is not a finite non-negative number", tp.Value, tp.Unit), nil
		return r
	}
	r.Throughput, r.ThroughputUnit = tp.Value, tp.Unit
	if st.CV > stats.CVWarnThreshold {
		r.Warnings = appendOnce(r.Warnings, fmt.Sprintf("cv %.1f%% is above %.0f%%: timings are noisy", 100*st.CV, 100*stats.CVWarnThreshold))
	}
	for _, w := range TimingWarnings(r.Config) {
		r.Warnings = appendOnce(r.Warnings, w)
	}
	return r
}

// The fewest warm-up calls and timed repeats a timing is trusted from:
// fewer warm-ups can leave caches, allocators and autotuners cold inside
// the samples, and fewer repeats give no 95% interval of the median (6 is
// the least) or a wide one.
const (
	MinWarmup  = 3
	MinRepeats = 10
)

// TimingWarnings says what is too few about a configuration's --warmup and
// --repeats, for the result and the run table.
func TimingWarnings(c result.Config) []string {
	var out []string
	if c.Warmup < MinWarmup {
		out = append(out, fmt.Sprintf("--warmup %d is below %d: early calls may be timed cold", c.Warmup, MinWarmup))
	}
	if c.Repeats < MinRepeats {
		out = append(out, fmt.Sprintf("--repeats %d is below %d: the median's interval is wide or absent", c.Repeats, MinRepeats))
	}
	return out
}

// badSamples says why an ok result's samples are unusable, or "".
func badSamples(r result.Result) string {
	if len(r.SamplesMs) == 0 {
		return "backend reported status ok with no samples"
	}
	if len(r.SamplesMs) != r.Config.Repeats {
		return fmt.Sprintf("backend returned %d samples for --repeats %d", len(r.SamplesMs), r.Config.Repeats)
	}
	if err := stats.Check(r.SamplesMs); err != nil {
		return err.Error()
	}
	if math.IsNaN(r.CompileMs) || r.CompileMs < 0 {
		return fmt.Sprintf("compile_ms is %v", r.CompileMs)
	}
	return ""
}

// dropBackendCVWarnings removes a backend's own noise warning: the harness
// recomputes the statistics, so it alone judges the spread (one warning, one
// threshold, whatever the backend's language).
func dropBackendCVWarnings(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !strings.HasPrefix(w, "cv ") {
			out = append(out, w)
		}
	}
	return out
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
