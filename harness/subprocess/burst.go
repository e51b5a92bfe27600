package subprocess

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

var _ backend.Burster = (*Backend)(nil)

// burstCalls is the "burst" op's request: how many calls to make.
type burstCalls struct {
	Calls int `json:"calls"`
}

// Burst sends "burst_prepare" (the configuration prepared and called once,
// untimed) and then "burst" req.Rounds times (at least once), and times
// only the burst round trips, on this Go process's monotonic clock: the
// program's own clocks are not asked, so code running in it cannot shorten
// the time. The fastest round is reported: load from other processes only
// ever slows a round, so the fastest is the one nearest the calls' own
// time. A round past req.Limit is ended (the program killed) and, when no
// round finished before it, reported unfinished. A program that predates
// the ops answers "unknown op", which becomes backend.ErrCannotBurst.
func (b *Backend) Burst(ctx context.Context, req backend.BurstRequest) (backend.BurstReport, error) {
	prep, err := b.burstCall(ctx, "burst_prepare", req.Run)
	if err != nil || prep.Status != result.StatusOK {
		return prep, err
	}
	var best *backend.BurstReport
	for range max(1, req.Rounds) {
		rep, err := b.burstRound(ctx, req)
		switch {
		case err != nil || rep.Status != result.StatusOK:
			return rep, err
		case rep.Unfinished && best != nil:
			return *best, nil // the program is gone: the rounds that finished stand
		case rep.Unfinished:
			return rep, nil
		case best == nil || rep.WallMs < best.WallMs:
			best = &rep
		}
	}
	return *best, nil
}

// burstRound times one "burst" request under req.Limit.
func (b *Backend) burstRound(ctx context.Context, req backend.BurstRequest) (backend.BurstReport, error) {
	bctx, cancel := ctx, context.CancelFunc(func() {})
	if req.Limit > 0 {
		bctx, cancel = context.WithTimeout(ctx, req.Limit)
	}
	defer cancel()
	start := time.Now()
	rep, err := b.burstCall(bctx, "burst", burstCalls{Calls: req.Calls})
	wall := time.Since(start)
	if err != nil && ctx.Err() == nil && errors.Is(bctx.Err(), context.DeadlineExceeded) {
		// Past the limit the call killed the program; how long it ran is
		// what there is to know: at least this long for these calls.
		return backend.BurstReport{Status: result.StatusOK, Calls: req.Calls, WallMs: ms(wall), Unfinished: true}, nil
	}
	if err != nil || rep.Status != result.StatusOK {
		return rep, err
	}
	if rep.Calls != req.Calls {
		return backend.BurstReport{}, fmt.Errorf("burst: asked for %d calls, the backend says it made %d", req.Calls, rep.Calls)
	}
	rep.WallMs = ms(wall)
	return rep, nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// burstCall sends one of the two ops and reads its report; a crash is the
// burst's failure, reported like a run's.
func (b *Backend) burstCall(ctx context.Context, op string, req any) (backend.BurstReport, error) {
	rep, err := b.call(ctx, op, req)
	if err != nil {
		if declined(rep, "cannot burst") {
			return backend.BurstReport{}, fmt.Errorf("%w: %s", backend.ErrCannotBurst, rep.Error)
		}
		var exit *ExitError
		if errors.As(err, &exit) {
			return backend.BurstReport{Status: result.StatusFailed, Message: exitMessage(exit)}, nil
		}
		return backend.BurstReport{}, err
	}
	if rep.Burst == nil {
		return backend.BurstReport{}, fmt.Errorf("%s: reply has no burst object", op)
	}
	return *rep.Burst, nil
}
