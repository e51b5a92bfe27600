package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/result"
)

// BatchExecutor is an Executor that can also send several cells of one
// backend process in one round trip (*bench.Session). RunBatch returns
// one finalized result per request, in order; an error means none came
// back (see bench.Session.RunBatch), and the cells then run one by one.
type BatchExecutor interface {
	Executor
	RunBatch(ctx context.Context, name string, reqs []backend.RunRequest, timeout time.Duration) ([]result.Result, error)
}

// sameBatch says whether b may ride in a's batch: one backend process (a
// variant is a request of its backend's process) on one device.
func sameBatch(a, b Cell) bool {
	an, _ := backend.SplitName(a.Backend)
	bn, _ := backend.SplitName(b.Backend)
	return an == bn && a.Device == b.Device
}

// batchSize is how many cells c's batch may hold on w: 1 where the sweep
// sends cells one by one, the executor cannot batch, or c's backend
// answered that it cannot.
func (s *state) batchSize(w Worker, c Cell) int {
	if _, ok := w.Exec.(BatchExecutor); !ok || s.opts.CellsPerCall <= 1 {
		return 1
	}
	name, _ := backend.SplitName(c.Backend)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noBatch[name] {
		return 1
	}
	return s.opts.CellsPerCall
}

// nextBatch hands out the next cell, as next does, and with it up to a
// batch's size of the following pending cells of its backend process and
// device, in plan order. The plan puts equal-cost cells of all backends
// side by side, so it looks past other backends' cells: they are left in
// place for the next call. Finished and blocked cells are left to next,
// which reports or records them in their turn. With several workers a
// batch takes at most its worker's share of those cells, so that no worker
// holds a batch while the others have nothing left to run.
func (s *state) nextBatch(w Worker) ([]Cell, error) {
	c, ok, err := s.next(w)
	if err != nil || !ok {
		return nil, err
	}
	out := []Cell{c}
	size := s.batchSize(w, c)
	if size <= 1 {
		return out, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var fits []int // indexes of the cells that may join, as many as can matter
	for i := s.pos; i < len(s.cells) && len(fits) < size*s.workers; i++ {
		d := s.cells[i]
		if s.taken[i] || !sameBatch(c, d) || s.existing(d) {
			continue
		}
		if _, blocked := s.blocker(d); blocked {
			continue
		}
		fits = append(fits, i)
	}
	share := (len(fits) + 1 + s.workers - 1) / s.workers // c and the rest, over the workers, rounded up
	for _, i := range fits[:min(len(fits), min(size, share)-1)] {
		s.taken[i] = true
		out = append(out, s.cells[i])
	}
	return out, nil
}

// groups splits a window of cells handed out together (ahead.go) into
// batches, each cell in the first batch of its process and device, in
// order. A cell whose compile ahead failed goes alone: that failure is its
// result, and it is not timed.
func (s *state) groups(w Worker, cells []Cell, done map[string]backend.Compiled) [][]Cell {
	used := make([]bool, len(cells))
	var out [][]Cell
	for i, c := range cells {
		if used[i] {
			continue
		}
		used[i] = true
		group := []Cell{c}
		if size := s.batchSize(w, c); size > 1 && compiledOK(done, c) {
			for j := i + 1; j < len(cells) && len(group) < size; j++ {
				if !used[j] && sameBatch(c, cells[j]) && compiledOK(done, cells[j]) {
					used[j] = true
					group = append(group, cells[j])
				}
			}
		}
		out = append(out, group)
	}
	return out
}

func compiledOK(done map[string]backend.Compiled, c Cell) bool {
	got, ok := done[c.Key()]
	return !ok || got.Status == result.StatusOK
}

// compiledOf is c's compile ahead, if it had one.
func compiledOf(done map[string]backend.Compiled, c Cell) *backend.Compiled {
	if got, ok := done[c.Key()]; ok {
		return &got
	}
	return nil
}

// dispatch runs cells handed out together: one alone (execute), several
// in one batch. waited is each cell's share of the compile wait (ahead.go).
func (s *state) dispatch(ctx context.Context, w Worker, cells []Cell, done map[string]backend.Compiled, waited time.Duration) error {
	if len(cells) == 1 {
		return s.execute(ctx, w, cells[0], compiledOf(done, cells[0]), waited, "")
	}
	return s.runBatch(ctx, w, cells, done, waited)
}

// trouble is a result after which the per-cell path starts a fresh
// process (execute): the process may be in any state, or still hold memory.
func trouble(st result.Status) bool {
	return st == result.StatusFailed || st == result.StatusOOM || st == result.StatusTimeout
}

// runBatch sends cells in one round trip and records each result in order
// as the batch returns, as execute records one (a crash loses at most the
// batch in flight, which a rerun runs again). Each cell keeps what the
// per-cell path gives it:
//   - a cell blocked by a smaller one's failure since it was handed out is
//     recorded skipped, not sent;
//   - a batch that fails as a whole (a crash, a hang past the sum of its
//     cells' timeouts, a broken reply) runs again one cell at a time on a
//     fresh process, so the cell that caused it gets its own status, tail
//     and classification and the others their results;
//   - at the first failed or out-of-memory cell the process is restarted
//     and that cell and the rest run again one by one: the failure's output
//     (its tail) and status are then its own, and no cell is timed in a
//     process that failed before it.
//
// Each such rerun says why in env.settings.dispatch; a result from the
// batch says "batch of N".
func (s *state) runBatch(ctx context.Context, w Worker, cells []Cell, done map[string]backend.Compiled, waited time.Duration) error {
	s.mu.Lock()
	var send []Cell
	for _, c := range cells {
		if cause, blocked := s.blocker(c); blocked {
			r := w.Exec.Finalize(skipped(c, cause, s.known[cause.Key()].Result.Status))
			if err := s.record(w, c, r, 0); err != nil {
				s.mu.Unlock()
				return err
			}
			continue
		}
		send = append(send, c)
	}
	s.mu.Unlock()
	if len(send) <= 1 {
		if len(send) == 1 {
			return s.execute(ctx, w, send[0], compiledOf(done, send[0]), waited, "")
		}
		return nil
	}
	name, _ := backend.SplitName(send[0].Backend)
	if w.Tails != nil {
		w.Tails.Reset(name)
	}
	if s.opts.Progress != nil {
		s.opts.Progress.BeginBatch(w.Name, send)
	}
	reqs := make([]backend.RunRequest, len(send))
	for i, c := range send {
		_, variant := backend.SplitName(c.Backend)
		reqs[i] = backend.RunRequest{Workload: c.Config.Workload, Variant: variant, Device: c.Device, Config: c.Config}
	}
	start := time.Now()
	results, err := w.Exec.(BatchExecutor).RunBatch(ctx, name, reqs, s.opts.Timeout*time.Duration(len(send)))
	if ctx.Err() != nil {
		return nil // interrupted: the batch's cells stay pending for the rerun
	}
	n := len(send)
	switch {
	case errors.Is(err, backend.ErrCannotBatch):
		s.mu.Lock()
		s.noBatch[name] = true
		s.mu.Unlock()
		s.note(fmt.Sprintf("sweep: %s cannot take a batch (%s); its cells run one by one", name, backend.ErrorText(err)))
		return s.oneByOne(ctx, w, send, done, waited, "")
	case err != nil:
		return s.oneByOne(ctx, w, send, done, waited, fmt.Sprintf(
			"alone: its batch of %d failed as a whole (%s), so each of its cells ran again on its own, in a fresh process", n, firstLine(backend.ErrorText(err))))
	}
	share := time.Since(start)/time.Duration(n) + waited
	for i, r := range results {
		c := send[i]
		if trouble(r.Status) {
			w.Exec.Restart(name)
			why := fmt.Sprintf("alone: it ended %s in a batch of %d (%s), so it ran again on its own, in a fresh process", r.Status, n, firstLine(r.Message))
			if err := s.execute(ctx, w, c, compiledOf(done, c), share, why); err != nil || ctx.Err() != nil {
				return err
			}
			return s.oneByOne(ctx, w, send[i+1:], done, share, fmt.Sprintf(
				"alone: a cell before it in its batch of %d failed, and a cell after a failure runs in a fresh process", n))
		}
		if cp := compiledOf(done, c); cp != nil {
			r = withCompiled(r, *cp)
		}
		r = bench.Classify(r)
		s.mu.Lock()
		err := s.record(w, c, r, share)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// oneByOne runs cells through the per-cell path, each noting why.
func (s *state) oneByOne(ctx context.Context, w Worker, cells []Cell, done map[string]backend.Compiled, waited time.Duration, why string) error {
	for _, c := range cells {
		if err := s.execute(ctx, w, c, compiledOf(done, c), waited, why); err != nil || ctx.Err() != nil {
			return err
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
