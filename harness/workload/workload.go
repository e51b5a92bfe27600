// Package workload is the second plugin axis beside the backend: what is
// computed. A workload declares its parameters, phases, cost model, size
// rank and verification rule; the CLI flags, validation, sweep axes, keys,
// labels and report columns are all derived from that declaration, so a new
// workload is one folder under harness/workload and one registration line in
// harness/workload/all.
package workload

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
)

// Phases a configuration can time. Which ones a workload has is its own
// declaration (Workload.Phases); "both" is forward and backward in one call.
const (
	PhaseForward   = "forward"
	PhaseBackward  = "backward"
	PhaseBoth      = "both"
	PhaseInnerOnly = "inner_only"
)

// Cost is the work of one timed call: floating-point operations and the
// memory traffic it cannot avoid. FLOPs / Bytes is the roofline's intensity.
type Cost struct {
	FLOPs float64
	Bytes float64
}

// Intensity is FLOPs per byte (0 when there is no traffic).
func (c Cost) Intensity() float64 {
	if c.Bytes == 0 {
		return 0
	}
	return c.FLOPs / c.Bytes
}

// Throughput is the workload's own headline rate of one result, e.g. tokens/s
// for a model or TFLOP/s for a kernel.
type Throughput struct {
	Value float64
	Unit  string
}

// Fixtures are the tensors every backend of a verification loads: weights
// (may be empty) and inputs, written to safetensors files by the harness.
type Fixtures struct {
	Weights map[string]tensorfile.Tensor
	Inputs  map[string]tensorfile.Tensor
}

// Workload is one computation that backends implement from its spec
// (docs/workloads/<name>.md). Every method takes a configuration that
// Resolve has already validated.
type Workload interface {
	// Name is the --workload value and result.Config.Workload.
	Name() string
	// Description is one line for `xbench workloads`.
	Description() string
	// Params declares the parameters in display order; "dtype" is one of them.
	Params() []Param
	// Phases lists the phases it defines; the first is the default.
	Phases() []string
	// Check enforces rules between parameters (the per-parameter ones are
	// already enforced); its error names the flags, the values and what is
	// allowed.
	Check(cfg result.Config) error
	// Label is a short human label of the parameters (no workload, no phase),
	// e.g. "125m linear L=2048" or "4096x4096x4096 nn".
	Label(cfg result.Config) string
	// Cost counts one timed call.
	Cost(cfg result.Config) (Cost, error)
	// Rank orders configurations by size: a progressive sweep runs smaller
	// ranks first and skips larger ones after an out-of-memory cell.
	Rank(cfg result.Config) float64
	// Throughput converts a median time into the workload's headline rate.
	Throughput(cfg result.Config, medianMs float64) Throughput

	// Fixtures makes deterministic weights and inputs for verification.
	Fixtures(cfg result.Config, seed int64) (Fixtures, error)
	// Output names the tensor a backend's Export writes and verify compares.
	Output(cfg result.Config) string
	// The float64 reference verify grades against is the workload's own:
	// it implements Referencer or MultiOutput (or, for problem sets whose
	// reference is their own Python code, BackendReferenced).

	// Tolerance is the largest relative L2 error accepted for cfg.
	Tolerance(cfg result.Config) float64
}

// Suiter is implemented by a workload that has named sets of
// configurations (GEMM's shape suites). `--shapes SPEC` expands SPEC into
// parameter sets, each overriding the flags' values for one configuration.
type Suiter interface {
	// SuiteHelp says which SPECs are accepted, for --help and errors.
	SuiteHelp() string
	// Suite expands SPEC: a suite name, a generated suite with arguments
	// (random:N:SEED) or a CSV file path. Each map holds parameter values
	// by name in canonical spelling; the harness validates each one.
	Suite(spec string) ([]map[string]string, error)
}

// Bucketer is implemented by a workload whose grids are large and whose
// JIT-compiling backends compile per shape (flash-semicrf's users' problem:
// torch.compile and XLA specialise on T, K and C). Bucket names the
// canonical shape of cfg's bucket; `sweep --per-bucket N` times N
// configurations of each bucket instead of every one, the bucket's largest
// first so its compile serves the rest, and keeps a bucket's cells together
// in one backend process.
type Bucketer interface {
	Bucket(cfg result.Config) string
}

// Smaller is implemented by a workload whose defaults are GPU-sized: it
// names the values `xbench verify` (and CPU comparisons) default to, so a
// float64 reference on a CPU finishes in seconds.
type Smaller interface {
	SmallDefaults() map[string]string
}

// Expander is implemented by a workload whose flags name many
// configurations at once (a folder of problems): Expand turns the
// parameter set of one combination of the flags into the parameter sets of
// its configurations, each of which the harness then resolves. limit, when
// above 0, is the value of the flag LimitFlag names: the most
// configurations to take from each expansion.
type Expander interface {
	Expand(set map[string]string, limit int) ([]map[string]string, error)
	// LimitFlag names the flag of limit (without dashes) and its help.
	LimitFlag() (name, help string)
}

// ColdCacher is implemented by a workload of single kernels, whose numbers
// a warm last-level cache flatters: inside a model, the layers before a
// kernel have evicted its operands. Its timings default to --cold-cache;
// --cold-cache=false times it warm.
type ColdCacher interface {
	ColdCacheByDefault() bool
}

// ColdCacheByDefault says whether w's timings are cold unless asked otherwise.
func ColdCacheByDefault(w Workload) bool {
	c, ok := w.(ColdCacher)
	return ok && c.ColdCacheByDefault()
}

// Referencer is implemented by a workload that computes its float64
// reference output (the tensor Output names) in-process, in the harness:
// the grader is never a contestant.
type Referencer interface {
	Reference(cfg result.Config, fx Fixtures) (tensorfile.Tensor, error)
}

// BackendReferenced is implemented by a workload whose reference can only
// be computed by running code a backend hosts: a KernelBench problem's
// reference is its own PyTorch Model, run eagerly in float64 on the CPU by
// the backend ReferenceBackend names. Workloads with a harness reference
// (Referencer, MultiOutput) do not implement it.
type BackendReferenced interface {
	ReferenceBackend() string
}

// ReferenceBackendOf names the backend whose float64 export is w's
// reference, or "" when the harness computes it.
func ReferenceBackendOf(w Workload) string {
	if b, ok := w.(BackendReferenced); ok {
		return b.ReferenceBackend()
	}
	return ""
}

// MultiOutput is implemented by a workload whose verification compares
// more than one tensor for some configurations: an output and the gradients
// of its inputs. Outputs names them, Output(cfg) first; verify grades each
// against Tolerance(cfg) and reports the worst. References computes them in
// float64 (for a BackendReferenced workload they are read from that
// backend's float64 export by these names instead).
type MultiOutput interface {
	Outputs(cfg result.Config) []string
	References(cfg result.Config, fx Fixtures) (map[string]tensorfile.Tensor, error)
}

// OutputsOf names the tensors verify compares for cfg: the MultiOutput's
// list, or the one Output.
func OutputsOf(w Workload, cfg result.Config) []string {
	if m, ok := w.(MultiOutput); ok {
		return m.Outputs(cfg)
	}
	return []string{w.Output(cfg)}
}
