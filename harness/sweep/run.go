package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/xbench/xbench/harness/result"
)

// Executor runs cells on backend processes it keeps alive; *bench.Session
// is the real one. Run always returns a finalized result, a timeout
// included (and restarts the backend after one).
type Executor interface {
	Run(ctx context.Context, fullName, device string, cfg result.Config, timeout time.Duration) result.Result
	Finalize(r result.Result) result.Result
	Restart(name string)
	Close()
}

// Worker is one executor with its own backend processes: the only one, or
// one per GPU, pinned through the environment of its processes.
type Worker struct {
	Name  string // "gpu 1"; empty for a single worker
	Exec  Executor
	Tails *Tails // optional: the output of its backends, for failed cells
}

// Options control one sweep invocation.
type Options struct {
	Timeout       time.Duration // per cell; 0 means none
	Force         bool          // rerun cells that already have a file
	Shard, Shards int           // run only shard Shard of Shards (Shards <= 1: all)
	Progress      *Progress     // optional
	// Budget is the wall time this invocation may start cells in (0: no
	// limit). Once it is spent no cell is begun; cells running finish and
	// are recorded, and the rest keep no file, so a rerun runs them.
	Budget time.Duration
	// Ahead, when set, compiles cells in helper processes before they are
	// timed (ahead.go); one worker only.
	Ahead *Ahead
	// CellsPerCall is how many cells of one backend process and device are
	// sent in one round trip (batch.go) where the executor and the backend
	// can take several; 0 or 1: one by one.
	CellsPerCall int
	now          func() time.Time // the clock the budget is read on (tests); time.Now
}

// Summary is what one invocation did.
type Summary struct {
	Planned  int                   // cells of this shard
	Existing int                   // already finished before (left alone)
	Written  map[result.Status]int // cells this invocation finished, by status
	// Left counts, by backend, the cells not begun because Options.Budget
	// ran out (they have no file: a rerun runs them).
	Left map[string]int
}

// LeftCount is the number of cells the budget left.
func (s Summary) LeftCount() int {
	n := 0
	for _, c := range s.Left {
		n += c
	}
	return n
}

// Run executes the ordered plan (every cell of the sweep, cheapest first) in
// folder f with the given workers. It returns when every cell of its shard
// has a file, or on the first write error, or when ctx ends; an interrupted
// cell is not recorded, so rerunning the same command finishes the rest.
func Run(ctx context.Context, f *Folder, plan []Cell, workers []Worker, opts Options) (Summary, error) {
	if len(workers) == 0 {
		return Summary{}, errors.New("sweep: no workers")
	}
	if opts.Ahead != nil && (len(workers) > 1 || opts.Ahead.Helpers < 1 || opts.Ahead.NewHelper == nil) {
		return Summary{}, fmt.Errorf("sweep: compiling ahead needs one worker and at least one helper (workers %d, helpers %d)", len(workers), opts.Ahead.Helpers)
	}
	lock, err := LockFolder(f.Dir, opts.Shard, opts.Shards)
	if err != nil {
		return Summary{}, err
	}
	defer lock.Release()
	if opts.Shards <= 1 {
		if err := f.RemoveStaleTemps(); err != nil {
			return Summary{}, err
		}
	}
	if err := f.WritePlan(plan); err != nil {
		return Summary{}, err
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	s := &state{folder: f, opts: opts, cells: Shard(plan, opts.Shard, opts.Shards),
		known: map[string]Entry{}, written: map[string]bool{}, noBatch: map[string]bool{},
		sum: Summary{Written: map[result.Status]int{}, Left: map[string]int{}}}
	s.taken, s.workers = make([]bool, len(s.cells)), len(workers)
	if opts.Budget > 0 {
		s.deadline = opts.now().Add(opts.Budget)
		if opts.Progress != nil {
			opts.Progress.SetDeadline(s.deadline)
		}
	}
	s.sum.Planned = len(s.cells)
	if err := s.refresh(); err != nil {
		return s.sum, err
	}
	if opts.Progress != nil {
		opts.Progress.Start(len(s.cells), len(workers), s.cells)
		defer opts.Progress.Finish()
	}
	// No derived, cancelable context here: the session starts backend
	// processes under the context of the call that needs them, and one
	// cancelled on return would kill them before Close can end them politely.
	// After an error, next() hands out no more cells instead.
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func(w Worker) {
			defer wg.Done()
			if err := s.work(ctx, w); err != nil {
				s.fail(err)
			}
		}(w)
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.sum, s.err
	}
	return s.sum, ctx.Err()
}

// state is the sweep's shared bookkeeping; mu guards all of it.
type state struct {
	folder *Folder
	opts   Options

	mu       sync.Mutex
	cells    []Cell           // this shard's cells, in order
	pos      int              // next cell to hand out
	taken    []bool           // cells after pos already handed out in a batch (batch.go)
	noBatch  map[string]bool  // backend processes that answered backend.ErrCannotBatch
	workers  int              // how many share the cells
	known    map[string]Entry // cell files on disk (valid ones count as finished)
	written  map[string]bool  // cells this invocation wrote
	frontier []Cell           // cells that ran out of memory or time
	deadline time.Time        // no cell begins after it (zero: no budget)
	sum      Summary
	err      error
}

func (s *state) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// refresh rereads the folder, so cells other shards finished count as done
// and their out-of-memory cells stop the larger ones here too. With --force
// only this invocation's own files count.
func (s *state) refresh() error {
	if s.opts.Force {
		return nil
	}
	entries, err := s.folder.Scan()
	if err != nil {
		return err
	}
	for key, e := range entries {
		if old, ok := s.known[key]; ok && old.Err == nil {
			continue
		}
		s.known[key] = e
		if e.Err == nil && stopsLarger(e.Result.Status) {
			s.frontier = append(s.frontier, Cell{Backend: e.Result.Backend, Device: deviceOfKey(key), Config: e.Result.Config})
		}
	}
	return nil
}

func stopsLarger(st result.Status) bool { return st == result.StatusOOM || st == result.StatusTimeout }

// deviceOfKey recovers the requested device from a cell's file name.
func deviceOfKey(key string) string {
	if i := strings.LastIndex(key, "__"); i >= 0 {
		return key[i+2:]
	}
	return ""
}

// next hands out the next cell to run, recording on the way the cells that
// are already finished or are skipped because a smaller one failed.
func (s *state) next(w Worker) (Cell, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Cell{}, false, nil // another worker failed; stop here
	}
	// Only shards share the folder while they run (a whole sweep holds it
	// exclusively), so only they need to look again before each cell.
	if s.opts.Shards > 1 {
		if err := s.refresh(); err != nil {
			return Cell{}, false, err
		}
	}
	for s.pos < len(s.cells) {
		c := s.cells[s.pos]
		s.pos++
		if s.taken[s.pos-1] {
			continue
		}
		if s.existing(c) {
			s.sum.Existing++
			s.report(w, c, s.known[c.Key()].Result, 0, true)
			continue
		}
		if cause, ok := s.blocker(c); ok {
			r := w.Exec.Finalize(skipped(c, cause, s.known[cause.Key()].Result.Status))
			if err := s.record(w, c, r, 0); err != nil {
				return Cell{}, false, err
			}
			continue
		}
		if !s.deadline.IsZero() && !s.opts.now().Before(s.deadline) {
			s.leave(c)
			return Cell{}, false, nil
		}
		return c, true, nil
	}
	return Cell{}, false, nil
}

// existing says whether c was finished by an earlier invocation (a valid
// file this one did not write). Caller holds mu.
func (s *state) existing(c Cell) bool {
	key := c.Key()
	e, ok := s.known[key]
	return ok && e.Err == nil && !s.written[key]
}

// leave counts c and every later cell without a finished file as left by
// the budget, and hands out no more. Caller holds mu.
func (s *state) leave(c Cell) {
	s.sum.Left[c.Backend]++
	for ; s.pos < len(s.cells); s.pos++ {
		rest := s.cells[s.pos]
		if s.taken[s.pos] {
			continue
		}
		if e, ok := s.known[rest.Key()]; ok && e.Err == nil {
			continue
		}
		s.sum.Left[rest.Backend]++
	}
}

// blocker is a smaller cell of the same backend, device and dtype that ran
// out of memory or time, if any.
func (s *state) blocker(c Cell) (Cell, bool) {
	for _, f := range s.frontier {
		if f.Key() != c.Key() && AtLeastAsLarge(c, f) {
			return f, true
		}
	}
	return Cell{}, false
}

func skipped(c Cell, cause Cell, st result.Status) result.Result {
	what := "ran out of memory"
	if st == result.StatusTimeout {
		what = "timed out"
	}
	return result.Result{Backend: c.Backend, Status: result.StatusSkipped, Config: c.Config,
		Device:  result.Device{Kind: deviceKind(c.Device)},
		Message: fmt.Sprintf("not run: the smaller cell %s %s on this backend, device and dtype", cause.Key(), what)}
}

// record writes a finished cell and updates the bookkeeping. Caller holds mu.
func (s *state) record(w Worker, c Cell, r result.Result, took time.Duration) error {
	key := c.Key()
	if err := s.folder.Write(key, r); err != nil {
		return err
	}
	s.known[key] = Entry{Key: key, Result: r}
	s.written[key] = true
	s.sum.Written[r.Status]++
	if stopsLarger(r.Status) {
		s.frontier = append(s.frontier, c)
	}
	s.report(w, c, r, took, false)
	return nil
}

func (s *state) report(w Worker, c Cell, r result.Result, took time.Duration, existing bool) {
	if s.opts.Progress != nil {
		s.opts.Progress.Cell(Event{Worker: w.Name, Cell: c, Result: r, Took: took, Existing: existing})
	}
}
