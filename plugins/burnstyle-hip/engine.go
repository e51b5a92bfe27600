package burnstylehip

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// engine is the seam between the backend protocol (Native: checks, timing,
// files) and a device's numeric model. Native picks one per request by
// device kind from its engines table; a GPU engine slots in by adding an
// entry there (see New), wrapped if its Prepare returns its own job type.
// Methods are exported so a type in another package (plugins/burnstyle-hip/
// gpu) can implement the same method set without importing this one.
type engine interface {
	// Device describes where the engine runs (kind, name, driver, count).
	Device() result.Device
	// Check says whether the engine can run cfg: StatusOK, or
	// StatusUnsupported / StatusOOM with a message naming what it cannot
	// and what it allows. Native has already checked cfg against the
	// backend's declared capabilities; Check adds the engine's own limits
	// (dtypes a GPU lacks, memory).
	Check(cfg ttt.Config, size ttt.Size) (result.Status, string)
	// Prepare loads weights (the spec's parameter names) and inputs
	// ("tokens" for forward; "xq", "xk", "xv", "gate" for inner-only) at
	// cfg.Dtype and returns a job ready to step. Nothing here is timed.
	Prepare(cfg ttt.Config, size ttt.Size, weights, inputs map[string]tensorfile.Tensor) (job, error)
}

// job is one prepared configuration on one engine.
type job interface {
	// Step runs one forward, inner-only or training-step call (the
	// training step is forward and backward together) and returns when its
	// results are complete (a GPU engine synchronises before returning), so
	// a wall clock around Step times it.
	Step() error
	// Output is the last Step's result: "logits" [B, L, V] or "out"
	// [B, nh, L, f], F64 when the dtype is float64, else F32.
	Output() (name string, t tensorfile.Tensor, err error)
	// MemoryBytes is the engine's count of bytes held for weights and
	// activations, reported as peak_memory_bytes.
	MemoryBytes() int64
	// Close releases the job's memory (device buffers on a GPU).
	Close() error
}

// outputsJob is a job whose step makes more than one tensor: the training
// step's logits and grad.<param> for every parameter (ttt.GradPrefix).
// Export writes them all; a plain job's one Output is the whole export.
type outputsJob interface {
	job
	Outputs() (map[string]tensorfile.Tensor, error)
}

// deviceTimedJob is a job that times its own steps on the device (GPU
// events, per docs/protocol.md rule 3). timeSteps then takes StepMs's
// milliseconds instead of the wall clock, and env.timing becomes Timing().
type deviceTimedJob interface {
	job
	StepMs() (float64, error)
	Timing() string
}

// engineFactory makes an engine; it fails when the device is absent.
type engineFactory func() (engine, error)

// devicePreference is the order "auto" tries registered engines in.
var devicePreference = []string{"cuda", "rocm", "cpu"}
