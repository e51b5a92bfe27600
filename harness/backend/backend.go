// Package backend is the plugin contract in plain Go types: what a backend
// declares it can do, what it is asked to run, and what it hands back. The
// gRPC layer in harness/plugin only translates these types.
package backend

import (
	"context"
	"errors"

	"github.com/xbench/xbench/harness/result"
)

// Backend is implemented by every backend, in-process or behind a plugin.
type Backend interface {
	// Info names the backend and declares its capabilities.
	Info(ctx context.Context) (Info, error)
	// Run times one configuration and returns raw samples; the harness
	// computes statistics. A combination the backend lacks comes back as a
	// result with status unsupported, never as an error.
	Run(ctx context.Context, req RunRequest) (result.Result, error)
	// Export loads the given weights and inputs, runs the model once and
	// writes its outputs, for cross-backend verification.
	Export(ctx context.Context, req ExportRequest) (ExportResponse, error)
}

// Capabilities declares what a backend (or one of its variants) supports:
// one entry per workload it implements. Anything outside them is answered
// with status unsupported and the reason, never attempted.
type Capabilities struct {
	Workloads []WorkloadCaps `json:"workloads"`
}

// WorkloadCaps is what a backend supports of one workload.
type WorkloadCaps struct {
	Workload string   `json:"workload"`
	Phases   []string `json:"phases"`
	Devices  []string `json:"devices"`
	// Values restricts enumerated parameters (dtype always; ttt_type,
	// layout, ...) to the listed values. A parameter it does not name is
	// supported at every value the workload allows.
	Values map[string][]string `json:"values,omitempty"`
	// Max bounds integer parameters (e.g. seq_len) the backend cannot exceed.
	Max map[string]int64 `json:"max,omitempty"`
}

// Variant is a second way a backend runs the same model (pytorch/compile).
type Variant struct {
	Name         string       `json:"name"`
	Description  string       `json:"description,omitempty"`
	Capabilities Capabilities `json:"capabilities"`
}

// Info describes a backend. Its base capabilities apply to the plain name;
// each variant is addressed as "name/variant".
type Info struct {
	Name         string       `json:"name"`
	Description  string       `json:"description,omitempty"`
	Capabilities Capabilities `json:"capabilities"`
	Variants     []Variant    `json:"variants,omitempty"`
}

// RunRequest asks for one timed configuration.
type RunRequest struct {
	Workload string        `json:"workload"`
	Variant  string        `json:"variant,omitempty"`
	Device   string        `json:"device"` // auto, cpu, cuda, rocm
	Config   result.Config `json:"config"`
	// Mode asks for cold-cache or CUDA-graph timing; the zero Mode is warm
	// and eager. A backend that cannot time in the mode answers status
	// unsupported with the reason, and records the mode it honoured in
	// result.Mode.
	Mode result.Mode `json:"mode,omitzero"`
}

// ExportRequest asks for one untimed forward (or inner-only) pass on given
// tensors. Paths are safetensors files on the machine both sides share.
type ExportRequest struct {
	Workload    string        `json:"workload"`
	Variant     string        `json:"variant,omitempty"`
	Device      string        `json:"device"`
	Config      result.Config `json:"config"`
	WeightsPath string        `json:"weights_path"`
	InputsPath  string        `json:"inputs_path"`
	OutputPath  string        `json:"output_path"`
}

// ExportResponse says whether the outputs were written, and where it ran.
type ExportResponse struct {
	Status  result.Status `json:"status"`
	Message string        `json:"message,omitempty"`
	Device  result.Device `json:"device"`
}

// BatchRunner is implemented by a backend that can run many configurations
// in one round trip (a Python process answering a thousand GEMM shapes
// without a thousand request/reply pairs). Results come back in request
// order, one per request, each made exactly as Run would make it; a
// request's own failure is its result. An error means the batch as a whole
// failed (the process died or hung, a reply broke the protocol): which of
// its requests caused it is then unknown, so the caller runs them again one
// by one (harness/sweep), never blames them all.
type BatchRunner interface {
	RunBatch(ctx context.Context, reqs []RunRequest) ([]result.Result, error)
}

// ErrCannotBatch is returned (wrapped) by a backend, or by the plugin layer
// for it, that has no run_batch op: its configurations are run one by one.
var ErrCannotBatch = errors.New("cannot run a batch")

// RunAll runs reqs through b, in one batch where b can, else one by one.
func RunAll(ctx context.Context, b Backend, reqs []RunRequest) ([]result.Result, error) {
	if br, ok := b.(BatchRunner); ok {
		return br.RunBatch(ctx, reqs)
	}
	out := make([]result.Result, 0, len(reqs))
	for _, r := range reqs {
		res, err := b.Run(ctx, r)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// RawRunner is implemented by a backend whose results arrive as JSON from
// another process (a JSON-lines program): the plugin layer passes those
// bytes through untouched, and the host validates them once, on arrival.
type RawRunner interface {
	RunRaw(ctx context.Context, req RunRequest) ([]byte, error)
}
