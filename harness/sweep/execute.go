package sweep

import (
	"context"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/result"
)

// work runs cells on one worker until none is left.
func (s *state) work(ctx context.Context, w Worker) error {
	if s.opts.Ahead != nil {
		return s.workAhead(ctx, w)
	}
	for {
		cells, err := s.nextBatch(w)
		if err != nil || len(cells) == 0 {
			return err
		}
		if err := s.dispatch(ctx, w, cells, nil, 0); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// execute times one cell handed out by next and records it; compiled, when
// set, is its compile ahead (ahead.go), and waited its share of the wall
// time the sweep spent waiting for its window's compiles, which the
// progress's ETA counts as the cell's. A cell that a smaller one's failure
// blocked since it was handed out is recorded as skipped instead. dispatch,
// when set, is why the cell runs on its own after being sent in a batch
// (batch.go), recorded in its env.settings.
func (s *state) execute(ctx context.Context, w Worker, c Cell, compiled *backend.Compiled, waited time.Duration, dispatch string) error {
	s.mu.Lock()
	if cause, blocked := s.blocker(c); blocked {
		r := w.Exec.Finalize(skipped(c, cause, s.known[cause.Key()].Result.Status))
		err := s.record(w, c, r, 0)
		s.mu.Unlock()
		return err
	}
	s.mu.Unlock()
	name, _ := backend.SplitName(c.Backend)
	if w.Tails != nil {
		w.Tails.Reset(name)
	}
	if s.opts.Progress != nil {
		s.opts.Progress.Begin(w.Name, c)
	}
	start := time.Now()
	var r result.Result
	if compiled != nil && compiled.Status != result.StatusOK {
		// The compile's own failure stands as the cell's: timing it would
		// compile (and fail) again in the timing process.
		r = w.Exec.Finalize(compileFailure(c, *compiled, s.opts.Ahead.Mode))
	} else {
		r = s.runCell(ctx, w, c)
		if ctx.Err() != nil {
			return nil // interrupted: the cell stays pending for the rerun
		}
		if r.Status != result.StatusOK && r.Tail == "" && w.Tails != nil {
			r.Tail = w.Tails.Last(name)
		}
		if compiled != nil {
			r = withCompiled(r, *compiled)
		}
		if dispatch != "" {
			r = bench.WithSetting(r, bench.DispatchSetting, dispatch)
		}
	}
	r = bench.Classify(r) // again, now that the tail is known
	if compiled == nil || compiled.Status == result.StatusOK {
		if r.Status == result.StatusFailed || r.Status == result.StatusOOM {
			// A backend that failed may be in any state (a half-initialised
			// device, a wedged process), and one that ran out of memory may
			// still hold some (a caching allocator, a reference kept by the
			// error): the next cell gets a fresh process, so it never fails
			// for the memory of the one before.
			w.Exec.Restart(name)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.record(w, c, r, time.Since(start)+waited)
}

// runCell runs one cell under the sweep's own context. No per-cell context
// wraps it: the session starts backend processes under the context it is
// given, so one that ended with the cell would kill the process after it.
func (s *state) runCell(ctx context.Context, w Worker, c Cell) result.Result {
	return w.Exec.Run(ctx, c.Backend, c.Device, c.Config, s.opts.Timeout)
}

func deviceKind(device string) string {
	if device == "cuda" || device == "rocm" {
		return device
	}
	return "cpu"
}
