// Package problems reads and writes KernelBench's baseline files and
// scores backends on a problem set (docs/workloads/problem.md). The numbers
// come from the harness's own statistics of each result; the share above a
// speedup is report.Exceeds, the one fast_p rule.
package problems

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
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
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	var b Baseline
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("read baseline %s: not KernelBench's {\"level1\": {\"<file>\": {\"mean\", ...}}}: %w", path, err)
	}
	for lv, probs := range b {
		if _, err := levelOf(lv); err != nil {
			return nil, fmt.Errorf("read baseline %s: %w", path, err)
		}
		for name, e := range probs {
			if why := e.check(); why != "" {
				return nil, fmt.Errorf("read baseline %s: %s/%s: %s", path, lv, name, why)
			}
		}
	}
	return b, nil
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

// FromResults builds one Baseline per baseline backend (by file name)
// from the ok problem results among rs. The problem's file name comes from
// its folder; a result whose file is gone, or of another status, is
// returned in skipped with the reason.
func FromResults(rs []result.Result) (files map[string]Baseline, skipped []string) {
	files = map[string]Baseline{}
	for _, r := range rs {
		file, ok := Files[r.Backend]
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
		files[file][lv][name] = Entry{Mean: r.Stats.MeanMs, Std: r.Stats.StdMs, Min: r.Stats.MinMs, Max: r.Stats.MaxMs,
			NumTrials: r.Stats.SampleCount, Hardware: r.Device.Name, Device: TorchDevice(r.Device.Kind)}
	}
	sort.Strings(skipped)
	return files, skipped
}

// WriteAll writes every baseline file under dir and returns the paths.
func WriteAll(dir string, files map[string]Baseline) ([]string, error) {
	var paths []string
	for _, b := range Backends {
		name := Files[b]
		if base, ok := files[name]; ok {
			p := filepath.Join(dir, name)
			if err := Write(p, base); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}
