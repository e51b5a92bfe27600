package sweep

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/manifest"
	"github.com/xbench/xbench/harness/result"
)

// gpuBench is the shared GPU of a fake sweep: it sees every timing and
// every compile, and records when a timing ran while a compile that uses
// the GPU was running, which the schedule must never allow.
type gpuBench struct {
	mu         sync.Mutex
	class      map[string]string // backend -> compile class
	gpuCompile int               // GPU-class compiles running now
	hostActive int               // host-class compiles running now
	timing     int               // cells being timed now
	violations []string
	hostDuring bool                     // a host-class compile ran while a cell was timed
	compiles   map[string]int           // by cell key
	compileSt  map[int]backend.Compiled // by seq_len: a compile's failure
	order      []string                 // cells in the order they were timed
}

func newGPUBench() *gpuBench {
	return &gpuBench{class: map[string]string{"jax": manifest.CompileAheadGPU, "iree": manifest.CompileAheadHost},
		compiles: map[string]int{}, compileSt: map[int]backend.Compiled{}}
}

type benchHelper struct{ g *gpuBench }

func (h benchHelper) Compile(ctx context.Context, name, device string, cfg result.Config, _ time.Duration) (backend.Compiled, error) {
	g := h.g
	if name == "cannot" {
		return backend.Compiled{}, fmt.Errorf("cannot: %w", backend.ErrCannotCompile)
	}
	c := Cell{Backend: name, Device: device, Config: cfg}
	g.mu.Lock()
	g.compiles[c.Key()]++
	gpu := g.class[name] == manifest.CompileAheadGPU
	if gpu {
		g.gpuCompile++
		if g.timing > 0 {
			g.violations = append(g.violations, "compile of "+c.Key()+" began while a cell was timed")
		}
	} else {
		g.hostActive++
	}
	failed, fails := g.compileSt[cfg.Int("seq_len")]
	g.mu.Unlock()
	time.Sleep(15 * time.Millisecond) // a slow compile
	g.mu.Lock()
	if gpu {
		g.gpuCompile--
	} else {
		g.hostActive--
	}
	g.mu.Unlock()
	if fails {
		return failed, nil
	}
	return backend.Compiled{Status: result.StatusOK, CompileMs: 40, Settings: map[string]string{"k": "v"}}, nil
}

func (benchHelper) Close() {}

// timedFake is the timing executor on the same GPU.
type timedFake struct {
	*fake
	g *gpuBench
}

func (t timedFake) Run(ctx context.Context, name, device string, cfg result.Config, timeout time.Duration) result.Result {
	g := t.g
	g.mu.Lock()
	g.timing++
	if g.gpuCompile > 0 {
		g.violations = append(g.violations, fmt.Sprintf("%s %d timed while %d GPU compiles ran", name, cfg.Int("seq_len"), g.gpuCompile))
	}
	g.order = append(g.order, Cell{Backend: name, Device: device, Config: cfg}.Key())
	g.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	g.mu.Lock()
	if g.hostActive > 0 {
		g.hostDuring = true
	}
	g.timing--
	g.mu.Unlock()
	r := t.fake.Run(ctx, name, device, cfg, timeout)
	if r.Status == result.StatusOK {
		r.CompileMs = 0.5 // the timing process's cache hit
	}
	return r
}

func TestCompileAheadSchedule(t *testing.T) {
	dir := t.TempDir()
	g := newGPUBench()
	oomMsg := "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 9 GiB"
	g.compileSt[192] = backend.Compiled{Status: result.StatusFailed, Message: oomMsg}
	g.compileSt[160] = backend.Compiled{Status: result.StatusFailed, Message: "Segmentation fault in the XLA compiler"}
	var p []Cell
	for _, b := range []string{"jax", "iree", "pytorch", "cannot"} {
		p = append(p, plan(b, []string{"tiny"}, []int{32, 64, 96, 128, 160, 192, 224, 256})...)
	}
	Order(p)
	exec := timedFake{fake: newFake(), g: g}
	ahead := &Ahead{Helpers: 3, Window: 8, Class: map[string]string{"jax": manifest.CompileAheadGPU,
		"iree": manifest.CompileAheadHost, "cannot": manifest.CompileAheadGPU},
		NewHelper: func() Compiler { return benchHelper{g} }}
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: exec}}, Options{Ahead: ahead}); err != nil {
		t.Fatal(err)
	}
	for _, v := range g.violations {
		t.Error(v)
	}
	if !g.hostDuring {
		t.Error("no host-class compile ran while a cell was timed: the host compiles did not overlap the timing")
	}
	// Timed in the plan's order, every cell but those whose compile failed
	// or that a failure's frontier stopped.
	var want []string
	for _, c := range p {
		seq := c.Config.Int("seq_len")
		if (c.Backend == "jax" || c.Backend == "iree") && seq >= 160 {
			continue
		}
		want = append(want, c.Key())
	}
	if strings.Join(g.order, "\n") != strings.Join(want, "\n") {
		t.Errorf("timing order:\n%s\nwant:\n%s", strings.Join(g.order, "\n"), strings.Join(want, "\n"))
	}
	snap, err := Read(NewFolder(dir))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]result.Result{}
	for _, e := range snap.Cells {
		got[e.Key] = e.Result
	}
	for _, c := range p {
		r, seq := got[c.Key()], c.Config.Int("seq_len")
		compiledAhead := c.Backend == "jax" || c.Backend == "iree"
		switch {
		case !compiledAhead:
			if r.Status != result.StatusOK || r.CompileMs != 0.5 || r.Env.Settings["compile_ahead"] != "" {
				t.Errorf("%s (not compiled ahead): status %s compile_ms %g settings %v", c.Key(), r.Status, r.CompileMs, r.Env.Settings)
			}
			if n := g.compiles[c.Key()]; n != 0 && c.Backend != "cannot" {
				t.Errorf("%s compiled ahead %d times, want 0", c.Key(), n)
			}
		case seq == 160:
			if r.Status != result.StatusFailed || !strings.Contains(r.Message, "compile ahead: Segmentation fault") || strings.Contains(r.Message, "compile ahead: compile ahead") {
				t.Errorf("%s: a crash while compiling ahead gave %s %q", c.Key(), r.Status, r.Message)
			}
		case seq == 192:
			if r.Status != result.StatusOOM {
				t.Errorf("%s: an out-of-memory compile gave %s %q, want oom", c.Key(), r.Status, r.Message)
			}
		case seq > 192:
			if r.Status != result.StatusSkipped {
				t.Errorf("%s: larger than an oom cell, status %s, want skipped", c.Key(), r.Status)
			}
		default:
			if r.Status != result.StatusOK || r.CompileMs != 40 || !strings.Contains(r.Env.Settings["compile_ahead"], "took 0.5 ms") {
				t.Errorf("%s: status %s compile_ms %g settings %v; want ok, the helper's 40 ms and the timing process's 0.5 ms beside it",
					c.Key(), r.Status, r.CompileMs, r.Env.Settings)
			}
			if n := g.compiles[c.Key()]; n != 1 {
				t.Errorf("%s compiled ahead %d times, want 1", c.Key(), n)
			}
		}
	}
}

func TestCompiledText(t *testing.T) {
	w := []Cell{cell("jax", "tiny", 32), cell("jax", "tiny", 64), cell("triton", "tiny", 32), cell("pytorch", "tiny", 32)}
	done := map[string]backend.Compiled{w[0].Key(): {Status: result.StatusOK}, w[1].Key(): {Status: result.StatusOOM},
		w[2].Key(): {Status: result.StatusOK}}
	got := compiledText(w, done, 61234*time.Millisecond)
	if want := "sweep: compiled 3 cells ahead in 1m1.2s (jax 2, triton 1); 1 failed, recorded as their cells' results"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestCompileAheadNeedsOneWorker(t *testing.T) {
	ahead := &Ahead{Helpers: 1, NewHelper: func() Compiler { return benchHelper{newGPUBench()} }}
	_, err := Run(context.Background(), NewFolder(t.TempDir()), plan("jax", []string{"tiny"}, []int{32}),
		[]Worker{{Exec: newFake()}, {Exec: newFake()}}, Options{Ahead: ahead})
	if err == nil || !strings.Contains(err.Error(), "one worker") {
		t.Fatalf("two workers with compile ahead: %v", err)
	}
}

// orderHelper records the order in which one helper is asked to compile.
type orderHelper struct {
	mu    *sync.Mutex
	order *[]int
}

func (h orderHelper) Compile(_ context.Context, _, _ string, cfg result.Config, _ time.Duration) (backend.Compiled, error) {
	h.mu.Lock()
	*h.order = append(*h.order, cfg.Int("seq_len"))
	h.mu.Unlock()
	return backend.Compiled{Status: result.StatusOK}, nil
}

func (orderHelper) Close() {}

func TestCompileAheadLargestFirstInAWindow(t *testing.T) {
	p := plan("jax", []string{"tiny"}, []int{32, 64, 96, 128, 160, 192})
	Order(p)
	var mu sync.Mutex
	var order []int
	ahead := &Ahead{Helpers: 1, Window: 3, Class: map[string]string{"jax": manifest.CompileAheadGPU},
		NewHelper: func() Compiler { return orderHelper{&mu, &order} }}
	if _, err := Run(context.Background(), NewFolder(t.TempDir()), p, []Worker{{Exec: newFake()}}, Options{Ahead: ahead}); err != nil {
		t.Fatal(err)
	}
	// Windows of 3 in the plan's cheapest-first order, each compiled largest first.
	if got, want := fmt.Sprint(order), "[96 64 32 192 160 128]"; got != want {
		t.Errorf("compile order %s, want %s", got, want)
	}
}
