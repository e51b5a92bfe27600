// Package problems reads and writes KernelBench's baseline files and
// scores backends on a problem set (docs/workloads/problem.md). The numbers
// come from the harness's own statistics of each result; the share above a
// speedup is report.Exceeds, the one fast_p rule.
package problems

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload/problem"
)

// Entry is one problem's baseline time in KernelBench's format (ms).
type Entry struct {
	Mean      float64 `json:"mean"`
	Std       float64 `json:"std"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max"`
	NumTrials int     `json:"num_trials"`
	Hardware  string  `json:"hardware"`
	Device    string  `json:"device"`
	// Precision is set only off KernelBench's convention ("strict-ieee"):
	// a file timed as KernelBench times has exactly KernelBench's keys, and
	// one that is not says so in every entry, whatever its file is named.
	Precision string `json:"precision,omitempty"`
	// How the entry was timed (Method), written by xbench for every entry;
	// a file without them is KernelBench's own (KernelBenchMethod).
	L2     string `json:"l2,omitempty"`
	Timer  string `json:"timer,omitempty"`
	Warmup int    `json:"num_warmup,omitempty"`
}

// Convention is the entry's precision convention: an entry without one
// (every file of KernelBench's, which leaves PyTorch's defaults alone) is
// kernelbench.
func (e Entry) Convention() string {
	if e.Precision == "" {
		return problem.PrecisionKernelBench
	}
	return e.Precision
}

// FileName is the baseline file of a backend under a convention:
// KernelBench's name under kernelbench, "_strict-ieee" before ".json"
// otherwise, so the two never share a file.
func FileName(backend, precision string) (string, bool) {
	name, ok := Files[backend]
	if ok && precision != problem.PrecisionKernelBench {
		name = strings.TrimSuffix(name, ".json") + "_" + precision + ".json"
	}
	return name, ok
}

// Baseline is one file: level ("level1") -> problem file name -> entry.
type Baseline map[string]map[string]Entry

// Files maps a baseline backend to its KernelBench file name: the timing
// mode is in the name, so each mode is a file of its own.
var Files = map[string]string{
	"pytorch":                      "baseline_time_torch.json",
	"pytorch/compile":              "baseline_time_torch_compile_inductor_default.json",
	"pytorch/compile-max-autotune": "baseline_time_torch_compile_inductor_max-autotune-no-cudagraphs.json",
}

// Backends are the baseline backends in the order they are run.
var Backends = []string{"pytorch", "pytorch/compile", "pytorch/compile-max-autotune"}

// LevelKey is "level<N>".
func LevelKey(level int) string { return "level" + strconv.Itoa(level) }

// Read loads a baseline file and checks every entry: a level key
// level<N>, finite non-negative times with min <= mean <= max, at least
// one trial. Errors name the file and the entry.
func Read(path string) (Baseline, error) {
	raw, err := store.ReadPath(path, store.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	var b Baseline
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("read baseline %s: not KernelBench's {\"level1\": {\"<file>\": {\"mean\", ...}}}: %w", path, err)
	}
	conventions := map[string]string{} // convention -> an entry of it
	for lv, probs := range b {
		if _, err := levelOf(lv); err != nil {
			return nil, fmt.Errorf("read baseline %s: %w", path, err)
		}
		for name, e := range probs {
			if why := e.check(); why != "" {
				return nil, fmt.Errorf("read baseline %s: %s/%s: %s", path, lv, name, why)
			}
			conventions[e.Convention()] = lv + "/" + name
		}
	}
	if len(conventions) > 1 {
		return nil, fmt.Errorf("read baseline %s: entries of two precision conventions in one file (%s is %s, %s is %s); a baseline is one convention",
			path, conventions[problem.PrecisionKernelBench], problem.PrecisionKernelBench, conventions[problem.PrecisionStrictIEEE], problem.PrecisionStrictIEEE)
	}
	return b, nil
}

// Convention is the file's precision convention (Read has checked there is
// one); an empty baseline is kernelbench.
func (b Baseline) Convention() string {
	for _, probs := range b {
		for _, e := range probs {
			return e.Convention()
		}
	}
	return problem.PrecisionKernelBench
}

func levelOf(key string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(key, "level"))
	if !strings.HasPrefix(key, "level") || err != nil || n < 1 {
		return 0, fmt.Errorf("key %q is not level<N>", key)
	}
	return n, nil
}

func (e Entry) check() string {
	for _, v := range []float64{e.Mean, e.Std, e.Min, e.Max} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Sprintf("time %v is not a finite non-negative number of ms", v)
		}
	}
	if e.Min > e.Mean || e.Mean > e.Max {
		return fmt.Sprintf("min %g <= mean %g <= max %g does not hold", e.Min, e.Mean, e.Max)
	}
	if e.NumTrials < 1 {
		return fmt.Sprintf("num_trials %d is below 1", e.NumTrials)
	}
	if e.L2 != "" && e.L2 != "cold" && e.L2 != "warm" {
		return fmt.Sprintf("l2 %q is not cold or warm", e.L2)
	}
	if c := e.Convention(); c != problem.PrecisionKernelBench && c != problem.PrecisionStrictIEEE {
		return fmt.Sprintf("precision %q is not %s or %s", e.Precision, problem.PrecisionKernelBench, problem.PrecisionStrictIEEE)
	}
	return ""
}

// Write stores b as KernelBench writes it (indented JSON; Go orders keys).
func Write(path string, b Baseline) error {
	raw, err := json.MarshalIndent(b, "", "    ")
	if err != nil {
		return fmt.Errorf("encode baseline %s: %w", path, err)
	}
	return store.WriteFileAtomic(path, append(raw, '\n'))
}

// TorchDevice is the device string KernelBench records: "cuda:0" on a GPU
// (ROCm torch names its devices cuda too), "cpu" on the CPU.
func TorchDevice(kind string) string {
	if kind == "cpu" {
		return "cpu"
	}
	return "cuda:0"
}

// FromResults builds one Baseline per baseline backend and precision
// convention (by file name, FileName) from the ok problem results among
// rs, so no file mixes conventions. The problem's file name comes from its
// folder; a result whose file is gone, or of another status, is returned in
// skipped with the reason.
func FromResults(rs []result.Result) (files map[string]Baseline, skipped []string) {
	files = map[string]Baseline{}
	for _, r := range rs {
		precision := problem.PrecisionOf(r.Config)
		file, ok := FileName(r.Backend, precision)
		if !ok || r.Config.Workload != problem.Name {
			continue
		}
		level, id := r.Config.Int("level"), r.Config.Int("problem")
		what := fmt.Sprintf("%s level%d/%d", r.Backend, level, id)
		if r.Status != result.StatusOK || r.Stats == nil {
			skipped = append(skipped, fmt.Sprintf("%s: %s %s", what, r.Status, r.Message))
			continue
		}
		name := problem.NameOf(r.Config.Get("problems"), level, id)
		if name == "" {
			skipped = append(skipped, what+": its problem file is not in "+r.Config.Get("problems"))
			continue
		}
		if files[file] == nil {
			files[file] = Baseline{}
		}
		lv := LevelKey(level)
		if files[file][lv] == nil {
			files[file][lv] = map[string]Entry{}
		}
		e := Entry{Mean: r.Stats.MeanMs, Std: r.Stats.StdMs, Min: r.Stats.MinMs, Max: r.Stats.MaxMs,
			NumTrials: r.Stats.SampleCount, Hardware: r.Device.Name, Device: TorchDevice(r.Device.Kind)}
		if precision != problem.PrecisionKernelBench {
			e.Precision = precision
		}
		m := ResultMethod(r)
		e.L2, e.Timer, e.Warmup = m.L2, m.Timer, m.Warmup
		files[file][lv][name] = e
	}
	sort.Strings(skipped)
	return files, skipped
}

// WriteAll writes every baseline file under dir and returns the paths.
func WriteAll(dir string, files map[string]Baseline) ([]string, error) {
	var paths []string
	for _, precision := range []string{problem.PrecisionKernelBench, problem.PrecisionStrictIEEE} {
		for _, b := range Backends {
			name, _ := FileName(b, precision)
			if base, ok := files[name]; ok {
				p := filepath.Join(dir, name)
				if err := Write(p, base); err != nil {
					return paths, err
				}
				paths = append(paths, p)
			}
		}
	}
	return paths, nil
}
