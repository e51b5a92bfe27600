package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/manifest"
	"github.com/xbench/xbench/harness/result"
)

// Compiler is a helper executor: backend processes of its own that compile
// cells ahead of their timing (*bench.Session is the real one). Compile
// reports the configuration's own failure in the Compiled status and
// returns an error only when the backend has no compile op
// (backend.ErrCannotCompile).
type Compiler interface {
	Compile(ctx context.Context, fullName, device string, cfg result.Config, timeout time.Duration) (backend.Compiled, error)
	Close()
}

// Ahead compiles the cells of some backends before they are timed, in
// helper processes, into the persistent compile cache the timing process
// reads (sweep --compile-ahead, docs/sweeps.md). Cells are handed out in
// windows; a window's cells whose backend compiles on the GPU as well
// (manifest.CompileAheadGPU: XLA's and Triton's autotuning) are compiled
// while nothing is timed, all helpers at once, and the window is then timed
// with no such compile running. A backend whose compile uses only the host
// (manifest.CompileAheadHost) compiles the next window while this one is
// timed.
type Ahead struct {
	Helpers int               // helper processes per backend (>= 1)
	Window  int               // cells handed out per window (0: 24 per helper)
	Class   map[string]string // backend name -> manifest.CompileAhead*; others are not compiled ahead
	// NewHelper makes one helper executor; Helpers of them are made, each
	// starting its own process of every backend it compiles for.
	NewHelper func() Compiler
	// Mode is the sweep's timing mode, recorded on a cell whose compile
	// failed (and so was not timed).
	Mode result.Mode
}

func (a *Ahead) window() int {
	if a.Window > 0 {
		return a.Window
	}
	// Large enough that one slow compile (Triton's first IEEE float32
	// configs: up to a minute on the H100) holds up the window's other
	// helpers only briefly: on the H100, windows of 8 per helper spent most
	// of a 7-minute sweep waiting for the slowest compile of each window.
	return 24 * a.Helpers
}

// pool is the helpers of one sweep invocation.
type pool struct {
	ahead   *Ahead
	timeout time.Duration
	helpers []Compiler
	mu      sync.Mutex
	cannot  map[string]bool // backends that answered ErrCannotCompile
}

func newPool(a *Ahead, timeout time.Duration) *pool {
	p := &pool{ahead: a, timeout: timeout, cannot: map[string]bool{}}
	for range a.Helpers {
		p.helpers = append(p.helpers, a.NewHelper())
	}
	return p
}

func (p *pool) Close() {
	for _, h := range p.helpers {
		h.Close()
	}
}

// class is how c's backend compiles ahead, or "" when it does not.
func (p *pool) class(c Cell) string {
	name, _ := backend.SplitName(c.Backend)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cannot[name] {
		return ""
	}
	return p.ahead.Class[name]
}

// classed counts the cells of a window whose backend compiles ahead.
func (p *pool) classed(cells []Cell) int {
	n := 0
	for _, c := range cells {
		if p.class(c) != "" {
			n++
		}
	}
	return n
}

// compiles is one window's compiles of one class, running or done.
type compiles struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	out map[string]backend.Compiled // by cell key
}

func (cs *compiles) wait() map[string]backend.Compiled {
	if cs == nil {
		return nil
	}
	cs.wg.Wait()
	return cs.out
}

// start compiles the cells of the given class: each backend's cells spread
// over the helpers, every helper working on every backend at once, the
// largest first: a window waits for its last compile, and a large cell
// begun last (cheapest-first is the plan's order) would stretch that wait
// while the other helpers idle.
func (p *pool) start(ctx context.Context, cells []Cell, class string) *compiles {
	cs := &compiles{out: map[string]backend.Compiled{}}
	byBackend := map[string][]Cell{}
	for _, c := range cells {
		if p.class(c) == class {
			name, _ := backend.SplitName(c.Backend)
			byBackend[name] = append(byBackend[name], c)
		}
	}
	for name, list := range byBackend {
		slices.SortStableFunc(list, func(a, b Cell) int { return cmp.Compare(b.Cost(), a.Cost()) })
		queue := make(chan Cell, len(list))
		for _, c := range list {
			queue <- c
		}
		close(queue)
		for _, h := range p.helpers {
			cs.wg.Add(1)
			go func() {
				defer cs.wg.Done()
				for c := range queue {
					if ctx.Err() != nil {
						return
					}
					got, err := h.Compile(ctx, c.Backend, c.Device, c.Config, p.timeout)
					if errors.Is(err, backend.ErrCannotCompile) {
						p.mu.Lock()
						p.cannot[name] = true // timed as before, compiled where it is timed
						p.mu.Unlock()
						continue
					}
					if err != nil {
						got = backend.Compiled{Status: result.StatusFailed, Message: err.Error()}
					}
					cs.mu.Lock()
					cs.out[c.Key()] = got
					cs.mu.Unlock()
				}
			}()
		}
	}
	return cs
}

// workAhead is work with compiles ahead: window by window, the GPU-class
// compiles first (nothing timed meanwhile), then the timing, during which
// the next window's host-class compiles run.
func (s *state) workAhead(ctx context.Context, w Worker) error {
	p := newPool(s.opts.Ahead, s.opts.Timeout)
	defer p.Close()
	window, err := s.nextWindow(w)
	var host *compiles
	if err == nil && len(window) > 0 {
		host = p.start(ctx, window, manifest.CompileAheadHost)
	}
	for err == nil && len(window) > 0 {
		classed := p.classed(window)
		if classed > 0 {
			s.note(fmt.Sprintf("sweep: compiling %d of the next %d cells ahead", classed, len(window)))
		}
		t0 := time.Now()
		done := p.start(ctx, window, manifest.CompileAheadGPU).wait()
		maps.Copy(done, host.wait())
		wait := time.Since(t0)
		if classed > 0 {
			s.note(compiledText(window, done, wait))
		}
		if ctx.Err() != nil {
			return nil
		}
		var next []Cell
		next, err = s.nextWindow(w)
		host = p.start(ctx, next, manifest.CompileAheadHost)
		for _, group := range s.groups(w, window, done) {
			if xerr := s.dispatch(ctx, w, group, done, wait/time.Duration(len(window))); xerr != nil || ctx.Err() != nil {
				host.wait()
				return xerr
			}
		}
		window = next
	}
	host.wait()
	return err
}

// compiledText is the line a window's compiles end with: how many, by
// backend, how long the window waited, and how many failed (their cells
// get the failure as their result).
func compiledText(window []Cell, done map[string]backend.Compiled, took time.Duration) string {
	by, failed := map[string]int{}, 0
	for _, cell := range window {
		c, ok := done[cell.Key()]
		if !ok {
			continue
		}
		by[cell.Backend]++
		if c.Status != result.StatusOK {
			failed++
		}
	}
	names := slices.Sorted(maps.Keys(by))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, by[n])
	}
	line := fmt.Sprintf("sweep: compiled %d cells ahead in %s", len(done), took.Round(100*time.Millisecond))
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if failed > 0 {
		line += fmt.Sprintf("; %d failed, recorded as their cells' results", failed)
	}
	return line
}

// nextWindow hands out up to the window's size of cells.
func (s *state) nextWindow(w Worker) ([]Cell, error) {
	var out []Cell
	for len(out) < s.opts.Ahead.window() {
		c, ok, err := s.next(w)
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *state) note(line string) {
	if s.opts.Progress != nil {
		s.opts.Progress.Write([]byte(line))
	}
}

// withCompiled is the timed result of a cell compiled ahead: its
// compile_ms is what compiling cost in the helper (where it happened); the
// timing process's own prepare and first call (a compile-cache load) is
// recorded beside it in env.settings.
func withCompiled(r result.Result, c backend.Compiled) result.Result {
	if r.Status != result.StatusOK {
		return r
	}
	r = bench.WithSetting(r, "compile_ahead", fmt.Sprintf("compiled in a helper process in %.1f ms (compile_ms); this process's prepare and first call then took %.1f ms",
		c.CompileMs, r.CompileMs))
	r.CompileMs = c.CompileMs
	return r
}

// compileFailure is the result of a cell whose compile ahead failed: it
// stands as the cell's result, and the cell is not timed. Its message says
// "compile ahead: " here, once; the layers below give the failure's own words.
func compileFailure(c Cell, got backend.Compiled, mode result.Mode) result.Result {
	// Message carries the helper's words; Tail is left for the timing
	// process's output, which did not run this cell.
	return result.Result{Backend: c.Backend, Status: got.Status, Config: c.Config, Mode: mode,
		Device: result.Device{Kind: deviceKind(c.Device)}, Message: "compile ahead: " + got.Message}
}
