package backend

import (
	"context"
	"errors"

	"github.com/xbench/xbench/harness/result"
)

// Profiler is an optional capability, like Calibrator: a backend that can
// run one configuration under its own profiler (torch.profiler,
// jax.profiler, its own phase events) and say where the time went, kernel
// by kernel. Profiled figures are never timings: a profiler changes what it
// measures, so the harness labels them and `xbench run` stays the timer.
type Profiler interface {
	Profile(ctx context.Context, req ProfileRequest) (ProfileReport, error)
}

// ErrCannotProfile is returned (wrapped, with the reason) by a backend, or
// by the plugin layer for it, that has no profiler.
var ErrCannotProfile = errors.New("cannot profile")

// ProfileRequest asks for Calls profiled calls of one configuration, after
// Config.Warmup untimed calls outside the profiler (the first, compiling
// call among them). The fields are a run request's, less the timing mode.
type ProfileRequest struct {
	Workload string        `json:"workload"`
	Variant  string        `json:"variant,omitempty"`
	Device   string        `json:"device"` // auto, cpu, cuda, rocm
	Config   result.Config `json:"config"`
	Calls    int           `json:"calls"`
	// TracePath is where the backend writes a Chrome trace (trace-event
	// JSON); absolute, chosen by the harness.
	TracePath string `json:"trace_path"`
}

// Time kinds of a ProfileReport: what the kernels' self times measure.
const (
	TimeDevice = "device" // time on the accelerator's streams
	TimeHost   = "host"   // CPU time of host ops (a CPU run, or no device events)
)

// ProfileReport is what a profiled run found. Status is ok, or
// unsupported/failed/oom with Message saying why, exactly as a run's.
type ProfileReport struct {
	Status  result.Status `json:"status"`
	Message string        `json:"message,omitempty"`
	Device  result.Device `json:"device"`
	// Profiler names the tool: "torch.profiler (CUPTI)", "jax.profiler", ...
	Profiler string `json:"profiler"`
	// TimeKind is TimeDevice or TimeHost.
	TimeKind string       `json:"time_kind"`
	Kernels  []KernelTime `json:"kernels"`
	// WallMs is the host wall clock around all the profiled calls together,
	// profiler overhead included.
	WallMs    float64 `json:"wall_ms"`
	Calls     int     `json:"calls"`
	TracePath string  `json:"trace_path,omitempty"`
}

// KernelTime is one kernel (or op, or phase) summed over the profiled calls.
type KernelTime struct {
	Name string `json:"name"`
	// SelfMs is its own time, children excluded, in milliseconds, total
	// over every profiled call.
	SelfMs float64 `json:"self_ms"`
	// Count is how many times it ran in all the profiled calls.
	Count int64 `json:"count"`
}
