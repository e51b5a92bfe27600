package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// DispatchSetting is the env.settings key that says how a result's cell
// was sent to its backend when that was not on its own: "batch of N" (one
// RunBatch round trip with N-1 other configurations), or why it ran on its
// own after its batch (harness/sweep).
const DispatchSetting = "dispatch"

// RunBatch times several configurations on one backend process (name; each
// request's Variant picks a variant) in one round trip (backend.BatchRunner),
// each finalized exactly as Run finalizes its one; timeout bounds the whole
// batch. Requests outside the backend's capabilities are answered
// unsupported here, as Run answers them, and not sent. Each result the
// backend answered records "batch of N" under DispatchSetting.
//
// A request's own failure is its result; the caller decides what follows
// it (the sweep restarts the process and runs the rest again on their own).
// An error means no request has a result: the backend has no run_batch
// (backend.ErrCannotBatch, the process left alone), or it did not start, or
// the batch as a whole failed (a crash, a hang past timeout, a broken
// reply) and the process was restarted. The requests must then run one by
// one, so that a crash is blamed on the one request that caused it.
func (s *Session) RunBatch(ctx context.Context, name string, reqs []backend.RunRequest, timeout time.Duration) ([]result.Result, error) {
	if s.processPerCell(name) && len(reqs) > 1 {
		// Two cells in one process would let the first one's code reach
		// the second: the caller runs them one by one, each through Run.
		return nil, fmt.Errorf("%s: %w: its manifest gives each cell a process of its own (process_per_cell)", name, backend.ErrCannotBatch)
	}
	if st, msg := s.startBounded(ctx, name); st != "" {
		return nil, fmt.Errorf("start backend %q: %s", name, msg)
	}
	runCtx, cancel := cellContext(ctx, timeout)
	defer cancel()
	b, info, err := s.Backend(runCtx, name)
	if err != nil {
		_, msg := startFailure(runCtx, err, timeout)
		return nil, fmt.Errorf("start backend %q: %s", name, msg)
	}
	br, ok := b.(backend.BatchRunner)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, backend.ErrCannotBatch)
	}
	out := make([]result.Result, len(reqs))
	bases := make([]result.Result, len(reqs))
	var send []backend.RunRequest
	var at []int // index in reqs of each request sent
	for i, req := range reqs {
		full := backend.FullName(name, req.Variant)
		bases[i] = result.Result{Backend: full, Config: req.Config, Device: result.Device{Kind: deviceKind(req.Device)}, Mode: s.Mode}
		if why := refusal(info, full, req.Device, req.Config); why != "" {
			r := bases[i]
			r.Status, r.Message = result.StatusUnsupported, why
			out[i] = s.Finalize(r)
			continue
		}
		req.Workload, req.Mode = req.Config.Workload, s.Mode
		send = append(send, req)
		at = append(at, i)
	}
	if len(send) == 0 {
		return out, nil
	}
	got, err := br.RunBatch(runCtx, send)
	switch {
	case err == nil:
	case errors.Is(err, backend.ErrCannotBatch):
		return nil, err
	case timedOut(runCtx, err):
		s.Restart(name)
		return nil, fmt.Errorf("batch of %d on %s: no results within %s (the sum of its cells' --timeout); the backend process was killed", len(send), name, timeout)
	default:
		s.Restart(name)
		return nil, fmt.Errorf("batch of %d on %s: %s; the backend process was restarted", len(send), name, backend.ErrorText(err))
	}
	if len(got) != len(send) {
		s.Restart(name)
		return nil, fmt.Errorf("batch of %d on %s: %d results came back", len(send), name, len(got))
	}
	dispatch := fmt.Sprintf("batch of %d", len(send))
	for j, res := range got {
		i := at[j]
		out[i] = s.answered(bases[i], WithSetting(res, DispatchSetting, dispatch))
	}
	return out, nil
}

// WithSetting is r with env.settings[key] = value, the map copied so that a
// result shared elsewhere is not changed.
func WithSetting(r result.Result, key, value string) result.Result {
	settings := maps.Clone(r.Env.Settings)
	if settings == nil {
		settings = map[string]string{}
	}
	settings[key] = value
	r.Env.Settings = settings
	return r
}
