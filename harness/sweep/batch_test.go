package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/manifest"
	"github.com/xbench/xbench/harness/result"
)

// batchFake is fake that also takes batches, as bench.Session does: one
// result per request (each run as Run runs it, marked "batch of N"), or an
// error for the whole batch.
type batchFake struct {
	*fake
	calls    [][]string      // cell keys of each RunBatch call
	timeouts []time.Duration // the timeout of each call
	crash    map[int]string  // seq-len in a batch -> the whole batch's error
	cannot   bool            // answer backend.ErrCannotBatch
}

func newBatchFake() *batchFake { return &batchFake{fake: newFake(), crash: map[int]string{}} }

func (f *batchFake) RunBatch(ctx context.Context, name string, reqs []backend.RunRequest, timeout time.Duration) ([]result.Result, error) {
	var keys []string
	for _, r := range reqs {
		keys = append(keys, Cell{Backend: backend.FullName(name, r.Variant), Device: r.Device, Config: r.Config}.Key())
	}
	f.mu.Lock()
	f.calls, f.timeouts = append(f.calls, keys), append(f.timeouts, timeout)
	f.mu.Unlock()
	if f.cannot {
		return nil, fmt.Errorf("%s: %w", name, backend.ErrCannotBatch)
	}
	for _, r := range reqs {
		if msg, ok := f.crash[r.Config.Int("seq_len")]; ok {
			f.Restart(name) // as the session does after a batch that failed as a whole
			return nil, errors.New(msg)
		}
	}
	out := make([]result.Result, len(reqs))
	for i, r := range reqs {
		out[i] = bench.WithSetting(f.Run(ctx, backend.FullName(name, r.Variant), r.Device, r.Config, 0),
			bench.DispatchSetting, fmt.Sprintf("batch of %d", len(reqs)))
	}
	return out, nil
}

var _ BatchExecutor = (*batchFake)(nil)

func results(t *testing.T, dir string) map[string]result.Result {
	t.Helper()
	snap, err := Read(NewFolder(dir))
	if err != nil || len(snap.Invalid) > 0 {
		t.Fatalf("read folder: %v, %d invalid", err, len(snap.Invalid))
	}
	out := map[string]result.Result{}
	for _, e := range snap.Cells {
		out[e.Key] = e.Result
	}
	return out
}

func cellKeys(cells ...Cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Key()
	}
	return out
}

// TestBatchesTakeOneBackendsNextCells: a batch is the next cell and the
// following pending cells of its backend process and device, in plan
// order, past the other backends' cells; what is left of a backend at the
// end goes alone. Every cell gets one progress line, in the order of its
// batch, and records how it was sent.
func TestBatchesTakeOneBackendsNextCells(t *testing.T) {
	b := func(l int) Cell { return cell("b", "tiny", l) }
	c := func(l int) Cell { return cell("c", "tiny", l) }
	v := func(l int) Cell { return cell("b/fast", "tiny", l) }
	seqs := []int{16, 32, 48, 64, 80, 96, 112}
	var p []Cell
	for _, l := range seqs {
		p = append(p, b(l), c(l))
	}
	p = append(p, v(16), v(32))
	Order(p)
	tests := []struct {
		name    string
		exec    func() Executor
		per     int
		batches [][]string // RunBatch calls, in order
	}{
		{"three per call", func() Executor { return newBatchFake() }, 3, [][]string{
			cellKeys(v(16), b(16), v(32)), cellKeys(c(16), c(32), c(48)), cellKeys(b(32), b(48), b(64)),
			cellKeys(c(64), c(80), c(96)), cellKeys(b(80), b(96), b(112))}}, // c 112 alone
		{"one per call", func() Executor { return newBatchFake() }, 1, nil},
		{"zero is one", func() Executor { return newBatchFake() }, 0, nil},
		{"an executor without batches", func() Executor { return newFake() }, 16, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			exec := tt.exec()
			var out bytes.Buffer
			prog := NewProgress(&out, false)
			prog.heartbeat = 0
			opts := Options{CellsPerCall: tt.per, Timeout: 2 * time.Second, Progress: prog}
			if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: exec}}, opts); err != nil {
				t.Fatal(err)
			}
			var calls [][]string
			if bf, ok := exec.(*batchFake); ok {
				calls = bf.calls
				for i, d := range bf.timeouts {
					if want := 2 * time.Second * time.Duration(len(calls[i])); d != want {
						t.Errorf("batch %d: timeout %s, want %s (the sum of its cells')", i, d, want)
					}
				}
			}
			if !slices.EqualFunc(calls, tt.batches, slices.Equal) {
				t.Errorf("batches:\n%v\nwant:\n%v", calls, tt.batches)
			}
			got := results(t, dir)
			if len(got) != len(p) {
				t.Fatalf("%d cells have files, want %d", len(got), len(p))
			}
			inBatch := map[string]int{}
			for _, call := range tt.batches {
				for _, k := range call {
					inBatch[k] = len(call)
				}
			}
			for k, r := range got {
				want := ""
				if n := inBatch[k]; n > 0 {
					want = fmt.Sprintf("batch of %d", n)
				}
				if r.Status != result.StatusOK || r.Env.Settings[bench.DispatchSetting] != want {
					t.Errorf("%s: status %s, dispatch %q; want ok, %q", k, r.Status, r.Env.Settings[bench.DispatchSetting], want)
				}
			}
			// One line per cell, in the order the cells were sent.
			var lines []string
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(l, "[") {
					lines = append(lines, l)
				}
			}
			if len(lines) != len(p) {
				t.Fatalf("%d progress lines, want %d:\n%s", len(lines), len(p), out.String())
			}
			for i, call := range flatten(tt.batches) {
				if !strings.Contains(lines[i], fmt.Sprintf("[%d/%d]", i+1, len(p))) || !strings.Contains(lines[i], describeKey(p, call)) {
					t.Errorf("line %d: %q, want cell %s", i, lines[i], call)
				}
			}
		})
	}
}

func flatten(calls [][]string) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c...)
	}
	return out
}

func describeKey(p []Cell, key string) string {
	for _, c := range p {
		if c.Key() == key {
			return Describe(c) + ":"
		}
	}
	return key
}

// TestBatchFailures: whatever goes wrong in a batch, every cell ends with
// the status the per-cell path gives it, the one that went wrong is blamed
// alone, and each says how it was sent.
func TestBatchFailures(t *testing.T) {
	p := plan("b", []string{"tiny"}, []int{16, 32, 48, 64, 80, 96})
	const asWhole, ended, after = "failed as a whole", "it ended", "a cell before it in its batch"
	tests := []struct {
		name     string
		setup    func(f *batchFake)
		status   map[int]result.Status
		dispatch map[int]string // seq-len -> what env.settings.dispatch contains
		runs     map[int]int    // seq-len -> times run (in a batch or alone); 1 otherwise
		calls    int
	}{
		{"crash mid-batch", func(f *batchFake) {
			f.crash[48] = "run_batch: backend process exited (exit status 3)"
			f.status[48], f.message[48] = result.StatusFailed, "run: backend process exited (exit status 3)"
		}, map[int]result.Status{48: result.StatusFailed},
			map[int]string{16: asWhole, 32: asWhole, 48: asWhole, 64: asWhole, 80: asWhole, 96: asWhole}, nil, 1},
		{"batch timeout", func(f *batchFake) {
			f.crash[64] = "batch of 6 on b: no results within 12s (the sum of its cells' --timeout)"
			f.status[64] = result.StatusTimeout
		}, map[int]result.Status{64: result.StatusTimeout, 80: result.StatusSkipped, 96: result.StatusSkipped},
			map[int]string{16: asWhole, 32: asWhole, 48: asWhole, 64: asWhole}, nil, 1},
		{"failed result", func(f *batchFake) {
			f.status[48], f.message[48] = result.StatusFailed, "ValueError: bad shape"
		}, map[int]result.Status{48: result.StatusFailed},
			map[int]string{16: "batch of 6", 32: "batch of 6", 48: ended + " failed in a batch of 6 (ValueError: bad shape)", 64: after, 80: after, 96: after},
			map[int]int{48: 2, 64: 2, 80: 2, 96: 2}, 1},
		{"out of memory stops the larger cells of the batch", func(f *batchFake) {
			f.status[48], f.message[48] = result.StatusOOM, "CUDA out of memory"
		}, map[int]result.Status{48: result.StatusOOM, 64: result.StatusSkipped, 80: result.StatusSkipped, 96: result.StatusSkipped},
			map[int]string{16: "batch of 6", 32: "batch of 6", 48: ended + " oom in a batch of 6"}, map[int]int{48: 2}, 1},
		{"backend cannot batch", func(f *batchFake) { f.cannot = true }, nil, map[int]string{}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := newBatchFake()
			tt.setup(f)
			if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{CellsPerCall: 8, Timeout: 2 * time.Second}); err != nil {
				t.Fatal(err)
			}
			if len(f.calls) != tt.calls {
				t.Errorf("%d batch calls, want %d: %v", len(f.calls), tt.calls, f.calls)
			}
			got := results(t, dir)
			for _, c := range p {
				l := c.Config.Int("seq_len")
				r := got[c.Key()]
				want, ok := tt.status[l]
				if !ok {
					want = result.StatusOK
				}
				if r.Status != want {
					t.Errorf("l%d: status %s (%s), want %s", l, r.Status, r.Message, want)
				}
				if d := r.Env.Settings[bench.DispatchSetting]; !strings.Contains(d, tt.dispatch[l]) || (tt.dispatch[l] == "") != (d == "") {
					t.Errorf("l%d: dispatch %q, want it to say %q", l, d, tt.dispatch[l])
				}
				runs, ok := tt.runs[l]
				if !ok {
					runs = 1
				}
				if want == result.StatusSkipped {
					runs = f.runs[c.Key()] // ran in the batch or not at all: never alone
					if strings.Contains(r.Env.Settings[bench.DispatchSetting], "alone") {
						t.Errorf("l%d: a skipped cell ran alone", l)
					}
				}
				if f.runs[c.Key()] != runs {
					t.Errorf("l%d ran %d times, want %d", l, f.runs[c.Key()], runs)
				}
			}
			if len(tt.status) > 0 && len(f.restarts) == 0 {
				t.Errorf("no restart after a failure in a batch")
			}
		})
	}
}

// TestInterruptedBatchIsRunAgain: an interrupt while a batch runs records
// none of its cells (those of earlier batches keep their files), and the
// rerun runs only the cells without one.
func TestInterruptedBatchIsRunAgain(t *testing.T) {
	dir := t.TempDir()
	p := plan("b", []string{"tiny"}, []int{16, 32, 48, 64, 80, 96, 112})
	f := newBatchFake()
	ctx, cancel := context.WithCancel(context.Background())
	f.onRun = func(c Cell) {
		if c.Config.Int("seq_len") == 80 {
			cancel()
		}
	}
	opts := Options{CellsPerCall: 3}
	if _, err := Run(ctx, NewFolder(dir), p, []Worker{{Exec: f}}, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sweep returned %v, want context.Canceled", err)
	}
	if got := len(results(t, dir)); got != 3 {
		t.Fatalf("%d cells recorded after the interrupt, want 3 (the first batch; not the one in flight)", got)
	}
	f.onRun = nil
	sum, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, opts)
	if err != nil || sum.Existing != 3 || sum.Written[result.StatusOK] != 4 {
		t.Fatalf("rerun: %d existing, %v written, %v; want 3 and 4 ok", sum.Existing, sum.Written, err)
	}
	for _, c := range p[:3] {
		if f.runs[c.Key()] != 1 {
			t.Errorf("%s was recorded before the interrupt but ran %d times", c.Key(), f.runs[c.Key()])
		}
	}
	// The rerun's batches: the interrupted one again, then the last cell alone.
	if want := [][]string{cellKeys(p[:3]...), cellKeys(p[3:6]...), cellKeys(p[3:6]...)}; !slices.EqualFunc(f.calls, want, slices.Equal) {
		t.Errorf("batches %v, want %v", f.calls, want)
	}
	if got := len(results(t, dir)); got != len(p) {
		t.Errorf("%d cells after the rerun, want %d", got, len(p))
	}
}

// TestBatchesWithCompileAhead: a window's cells are batched by backend; a
// cell whose compile failed is recorded with that failure, never sent; the
// others keep their compile_ms from the helper beside their dispatch.
func TestBatchesWithCompileAhead(t *testing.T) {
	dir := t.TempDir()
	g := newGPUBench()
	g.class["b"] = manifest.CompileAheadHost
	g.compileSt[48] = backend.Compiled{Status: result.StatusFailed, Message: "Segmentation fault in the compiler"}
	p := plan("b", []string{"tiny"}, []int{16, 32, 48, 64, 80})
	f := newBatchFake()
	ahead := &Ahead{Helpers: 1, Window: 8, Class: map[string]string{"b": manifest.CompileAheadHost},
		NewHelper: func() Compiler { return benchHelper{g} }}
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{Ahead: ahead, CellsPerCall: 16}); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{cellKeys(p[0], p[1], p[3], p[4])}; !slices.EqualFunc(f.calls, want, slices.Equal) {
		t.Errorf("batches %v, want %v", f.calls, want)
	}
	got := results(t, dir)
	for _, c := range p {
		r := got[c.Key()]
		if c.Config.Int("seq_len") == 48 {
			if r.Status != result.StatusFailed || !strings.HasPrefix(r.Message, "compile ahead: ") || f.runs[c.Key()] != 0 {
				t.Errorf("failed compile: status %s, message %q, runs %d", r.Status, r.Message, f.runs[c.Key()])
			}
			continue
		}
		if r.Status != result.StatusOK || r.CompileMs != 40 || r.Env.Settings["compile_ahead"] == "" || r.Env.Settings[bench.DispatchSetting] != "batch of 4" {
			t.Errorf("%s: status %s, compile_ms %v, settings %v", c.Key(), r.Status, r.CompileMs, r.Env.Settings)
		}
	}
}

// TestWorkersShareBatchesWithoutOverlap: workers taking batches from one
// plan (cells past the next one included) run every cell once.
func TestWorkersShareBatchesWithoutOverlap(t *testing.T) {
	dir := t.TempDir()
	p := append(plan("b", []string{"tiny", "125m"}, []int{16, 32, 48, 64, 80}), plan("c", []string{"tiny"}, []int{16, 32, 48})...)
	Order(p)
	f := newBatchFake()
	workers := []Worker{{Name: "gpu 0", Exec: f}, {Name: "gpu 1", Exec: f}, {Name: "gpu 2", Exec: f}}
	if _, err := Run(context.Background(), NewFolder(dir), p, workers, Options{CellsPerCall: 4}); err != nil {
		t.Fatal(err)
	}
	for _, c := range p {
		if f.runs[c.Key()] != 1 {
			t.Errorf("%s ran %d times", c.Key(), f.runs[c.Key()])
		}
	}
	// How many batches the three workers send depends on which worker takes
	// which cell first (a share of 1 runs alone), so the test asserts the
	// batches' shape, not their number.
	if len(results(t, dir)) != len(p) || len(f.calls) == 0 {
		t.Errorf("%d files of %d cells, %d batches", len(results(t, dir)), len(p), len(f.calls))
	}
	for _, keys := range f.calls {
		if len(keys) > 4 {
			t.Errorf("a batch of %d cells, more than --cells-per-call 4: %v", len(keys), keys)
		}
		for _, k := range keys {
			if strings.SplitN(k, "__", 2)[0] != strings.SplitN(keys[0], "__", 2)[0] {
				t.Errorf("one batch holds two backends: %v", keys)
			}
		}
	}
}
