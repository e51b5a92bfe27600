package backend

import (
	"context"
	"errors"
	"time"

	"github.com/xbench/xbench/harness/result"
)

// Burster is an optional capability: a backend that can call one prepared
// configuration many times back to back and time nothing itself, so that
// a clock outside the backend's process measures the calls. The harness
// uses it to check a CPU cell's samples against its own clock
// (harness/bench/outside.go): code in the backend's process can patch
// that process's clock, never the harness's.
type Burster interface {
	Burst(ctx context.Context, req BurstRequest) (BurstReport, error)
}

// ErrCannotBurst is returned (wrapped, with the reason) by a backend, or
// by the plugin layer for it, that has no burst op.
var ErrCannotBurst = errors.New("cannot burst")

// BurstRequest asks for Rounds bursts (at least one) of Calls back-to-back
// calls of Run's configuration, prepared (and called once) before the
// first begins; the fastest round is reported. Limit, when positive,
// bounds each round alone: a round that passes it is ended, its process
// killed, and (when no round finished before it) reported Unfinished.
type BurstRequest struct {
	Run    RunRequest    `json:"run"`
	Calls  int           `json:"calls"`
	Rounds int           `json:"rounds,omitempty"`
	Limit  time.Duration `json:"limit,omitempty"`
}

// BurstReport is how the burst went. Status is ok, or unsupported, failed
// or oom with Message saying why, as a run's. WallMs is the wall time of
// the fastest round of Calls calls (preparing excluded), measured by the
// Go process that talks to the backend's program, never by the program.
type BurstReport struct {
	Status  result.Status `json:"status"`
	Message string        `json:"message,omitempty"`
	Calls   int           `json:"calls"`
	WallMs  float64       `json:"wall_ms"`
	// Unfinished: the burst passed the request's Limit and was ended;
	// WallMs is then a lower bound of the calls' time.
	Unfinished bool `json:"unfinished,omitempty"`
}
