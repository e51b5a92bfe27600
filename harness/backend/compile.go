package backend

import (
	"context"
	"errors"

	"github.com/xbench/xbench/harness/result"
)

// Compiler is implemented by a backend that can compile a configuration
// without timing it: prepare and one untimed call, so that a JIT's work
// (XLA's autotuned executable, Triton's kernels and autotuning choice) lands
// in the persistent compile cache before the cell is timed, possibly by
// another process of the same backend. `xbench sweep --compile-ahead` uses
// it; docs/sweeps.md says when it overlaps with timing.
type Compiler interface {
	Compile(ctx context.Context, req RunRequest) (Compiled, error)
}

// ErrCannotCompile is returned (wrapped) by a backend, or by the plugin
// layer for it, that has no compile op.
var ErrCannotCompile = errors.New("cannot compile ahead")

// Compiled is what compiling one configuration ahead cost and left behind.
// Status is ok, or the failure the configuration met while compiling
// (unsupported, oom, failed), which then stands as the cell's result.
type Compiled struct {
	Status  result.Status `json:"status"`
	Message string        `json:"message,omitempty"`
	// CompileMs is prepare's compile plus the first call, measured in the
	// process that compiled: what a run's compile_ms would have read.
	CompileMs float64           `json:"compile_ms"`
	Settings  map[string]string `json:"settings,omitempty"`
}
