// Package problem is the workload of docs/workloads/problem.md: one
// problem of a KernelBench-format problem set, a Python file that defines
// Model, get_inputs() and get_init_inputs(). The harness knows nothing of
// its computation; it finds the file, names the configuration and leaves the
// model to the backends.
package problem

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// Workload is the problem workload; it holds no state.
type Workload struct{}

var (
	_ workload.Workload = Workload{}
	_ workload.Expander = Workload{}
)

// Name is the workload's name.
const Name = "problem"

// Limits. MaxDirLen keeps a result's file name (which holds the folder)
// under 255 bytes; MaxID and MaxLevel are far above any set.
const (
	MaxDirLen = 128
	MaxID     = 1_000_000
	MaxLevel  = 99
	// Tol and TolTF32 are the largest relative L2 errors of `xbench
	// verify` under strict-ieee and kernelbench (see Tolerance).
	Tol     = 1e-3
	TolTF32 = 1e-2
)

func (Workload) Name() string { return Name }

func (Workload) Description() string {
	return "one problem of a KernelBench-format set: a Python file with Model, get_inputs(), get_init_inputs()"
}

// Params: the folder, the level and the problem id say which file; dtype
// is float32, the problems' own. problem 0 is "every problem of the
// level", which Expand replaces by each id before anything resolves it.
func (Workload) Params() []workload.Param {
	return []workload.Param{
		{Name: "problems", Kind: workload.String, Default: "problems", MaxLen: MaxDirLen,
			Help: "the problem set: a folder holding level1/, level2/, ... (made absolute)"},
		{Name: "level", Kind: workload.Int, Default: "1", Min: 1, Max: MaxLevel, Help: "the level (folder level<N>)"},
		{Name: "problem", Kind: workload.Int, Default: "0", Min: 0, Max: MaxID,
			Help: "the problem id, the number before the first _ of its file name (0: every problem of the level)"},
		{Name: "dtype", Kind: workload.Enum, Default: "float32", Allowed: []string{"float32"},
			Help: "float32, the problems' own dtype"},
		{Name: "precision", Kind: workload.Enum, Default: PrecisionKernelBench, Allowed: []string{PrecisionKernelBench, PrecisionStrictIEEE},
			Help: "kernelbench: PyTorch's defaults, under which KernelBench times (cuDNN convolutions may use TF32, matmuls are IEEE float32); strict-ieee: TF32 off everywhere"},
	}
}

// The precision conventions a problem is timed under (the "precision"
// param). KernelBench's scripts leave PyTorch's defaults alone, so its
// published baselines were timed with cuDNN's TF32 on: a baseline meant to
// compare with them must be too. Results of the two conventions never share
// a baseline file or a score.
const (
	PrecisionKernelBench = "kernelbench"
	PrecisionStrictIEEE  = "strict-ieee"
)

// PrecisionOf is a result's convention. A problem result written before the
// param existed was timed with TF32 off everywhere: strict-ieee.
func PrecisionOf(cfg result.Config) string {
	if p := cfg.Get("precision"); p != "" {
		return p
	}
	return PrecisionStrictIEEE
}

func (Workload) Phases() []string { return []string{workload.PhaseForward} }

// Check refuses a configuration that names no single problem (problem 0
// left after expansion) or a folder that is not absolute (Expand makes it
// so; backends run in another working directory).
func (Workload) Check(cfg result.Config) error {
	if cfg.Int("problem") < 1 {
		return &workload.ValueError{Flag: "--problem", Value: cfg.Get("problem"),
			Allowed: fmt.Sprintf("a problem id 1 to %d (0, every problem, is expanded before a configuration is made)", MaxID)}
	}
	if !filepath.IsAbs(cfg.Get("problems")) {
		return &workload.ValueError{Flag: "--problems", Value: cfg.Get("problems"), Allowed: "an absolute folder path"}
	}
	return nil
}

// Label is "level1/3_conv_relu.py", or "level1/3" when the folder is not
// here to name the file.
func (Workload) Label(cfg result.Config) string {
	level, id := cfg.Int("level"), cfg.Int("problem")
	if n := NameOf(cfg.Get("problems"), level, id); n != "" {
		return fmt.Sprintf("level%d/%s", level, n)
	}
	return fmt.Sprintf("level%d/%d", level, id)
}

// Cost is unknown: a problem is arbitrary PyTorch, so it is zero, which the
// report shows as no roofline point.
func (Workload) Cost(result.Config) (workload.Cost, error) { return workload.Cost{}, nil }

// Rank orders by level then id, so a sweep runs a set in its own order.
func (Workload) Rank(cfg result.Config) float64 {
	return float64(cfg.Int("level"))*(MaxID+1) + float64(cfg.Int("problem"))
}

// ColdCacheByDefault: KernelBench times every trial after writing a 256 MiB
// buffer (its "cold cache" L2 flush), so a problem is timed cold unless
// --cold-cache=false. On the H100, KernelBench's own method read its level 1
// and 2 problems 0.3-7% faster warm than cold (ids 1-20; 39 of 40 within 6%
// of its published baseline cold, 37 warm).
func (Workload) ColdCacheByDefault() bool { return true }

// Throughput is calls per second at the median.
func (Workload) Throughput(_ result.Config, medianMs float64) workload.Throughput {
	t := workload.Throughput{Unit: "calls/s"}
	if medianMs > 0 {
		t.Value = 1000 / medianMs
	}
	return t
}

// LimitFlag is --max-problems.
func (Workload) LimitFlag() (string, string) {
	return "max-problems", "with --problem 0, at most this many problems of each level, lowest ids first (0: all)"
}

// Expand makes the folder absolute and replaces problem 0 by every problem
// of the level (at most limit of them). A named problem must exist. Errors
// name the flag, the value and what is allowed.
func (Workload) Expand(set map[string]string, limit int) ([]map[string]string, error) {
	dir := set["problems"]
	abs, err := filepath.Abs(dir)
	if err != nil || dir == "" {
		return nil, &workload.ValueError{Flag: "--problems", Value: dir, Allowed: "a folder holding level<N>/ folders"}
	}
	p, _ := workload.ParamOf(Workload{}, "level")
	lv, err := p.Canonical(set["level"])
	if err != nil {
		return nil, err
	}
	level, _ := strconv.Atoi(lv)
	files, err := List(abs, level)
	if err != nil {
		return nil, &workload.ValueError{Flag: "--problems --level", Value: fmt.Sprintf("%s %d", dir, level),
			Allowed: "a folder with a level<N>/ folder of <id>_<name>.py files (" + err.Error() + ")"}
	}
	pp, _ := workload.ParamOf(Workload{}, "problem")
	idText, err := pp.Canonical(set["problem"])
	if err != nil {
		return nil, err
	}
	id, _ := strconv.Atoi(idText)
	var out []map[string]string
	for _, f := range files {
		if id != 0 && f.ID != id {
			continue
		}
		if id == 0 && limit > 0 && len(out) == limit {
			break
		}
		m := map[string]string{}
		for k, v := range set {
			m[k] = v
		}
		m["problems"], m["level"], m["problem"] = abs, lv, strconv.Itoa(f.ID)
		out = append(out, m)
	}
	if len(out) == 0 {
		allowed := "one of the ids of " + LevelDir(abs, level)
		if len(files) == 0 {
			allowed = "a level folder with problems; " + LevelDir(abs, level) + " has none"
		}
		return nil, &workload.ValueError{Flag: "--problem", Value: idText, Allowed: allowed}
	}
	return out, nil
}

// Fixtures: no weights; the one input is the seed under which each backend
// builds the model and calls get_inputs() on the CPU, so every backend
// starts from the same numbers without the harness knowing the shapes.
func (Workload) Fixtures(_ result.Config, seed int64) (workload.Fixtures, error) {
	if seed < 0 || seed > 1<<31-1 {
		return workload.Fixtures{}, fmt.Errorf("problem fixtures: seed %d is outside 0 to 2^31-1", seed)
	}
	return workload.Fixtures{Weights: map[string]tensorfile.Tensor{},
		Inputs: map[string]tensorfile.Tensor{"seed": tensorfile.I32([]int{1}, []int32{int32(seed)})}}, nil
}

// Output is the model's output (the first tensor when it returns several).
func (Workload) Output(result.Config) string { return "out" }

// ReferenceBackend implements workload.BackendReferenced: a problem's
// reference is its own PyTorch Model, which the harness cannot run itself,
// so it is the pytorch backend's eager export in float64 on the CPU.
func (Workload) ReferenceBackend() string { return "pytorch" }

var _ workload.BackendReferenced = Workload{}

// Tolerance is the largest relative L2 error against the float64
// reference: under strict-ieee 1e-3 (float32 arithmetic in any order stays
// near 1e-6 on the shipped set, and a TF32 product, about 1e-3 each, fails
// it on purpose); under kernelbench TolTF32, since cuDNN may round a
// convolution's operands to TF32 there. The candidates' gate is
// KernelBench's elementwise atol/rtol instead (docs/workloads/problem.md).
func (Workload) Tolerance(cfg result.Config) float64 {
	if PrecisionOf(cfg) == PrecisionKernelBench {
		return TolTF32
	}
	return Tol
}
