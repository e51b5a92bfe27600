package sweep

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// TestETAFromCellsAlone: the first cell took 60 s of wall time, almost all
// of it the backend's start; its own work (compilation plus warm-up and
// repeats at the mean) was 2 s. Two more equal cells are left: the ETA is
// about 4 s, not 2 minutes.
func TestETAFromCellsAlone(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, false)
	cfg := ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 64, MiniBatch: 16, Dtype: "float32",
		Backbone: "transformer", Warmup: 3, Repeats: 7}.Result()
	cells := []Cell{{Backend: "a", Device: "cpu", Config: cfg}, {Backend: "b", Device: "cpu", Config: cfg}, {Backend: "c", Device: "cpu", Config: cfg}}
	p.Start(3, 1, cells)
	r := result.Result{Status: result.StatusOK, Config: cfg, CompileMs: 1000, Stats: &result.Stats{MeanMs: 100, MedianMs: 100}}
	p.Cell(Event{Cell: cells[0], Result: r, Took: 60 * time.Second})
	if !strings.Contains(out.String(), "ETA ~4s") {
		t.Errorf("progress line %q, want ETA ~4s (2 cells of 2 s each)", out.String())
	}
	// A failed cell has no timings of its own: its wall time counts.
	if got := cellTime(Event{Result: result.Result{Status: result.StatusFailed}, Took: 5 * time.Second}); got != 5*time.Second {
		t.Errorf("failed cell counts %v, want its wall time", got)
	}
}

// TestProgressWhileACellRuns: a cell that runs for minutes is not a hang.
// Off a terminal it gets a "still running" line each heartbeat; the ETA,
// which two 2 s cells put at 2 s for the last one, rises while the slow
// one runs past its estimate instead of jumping after it; on a terminal
// the bar shows the running cell's elapsed time.
func TestProgressWhileACellRuns(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, false)
	p.heartbeat = 0 // no timer: the test ticks
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return clock }
	cfg := ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 64, MiniBatch: 16, Dtype: "float32",
		Backbone: "transformer", Warmup: 3, Repeats: 7}.Result()
	cells := []Cell{{Backend: "a", Device: "cpu", Config: cfg}, {Backend: "b", Device: "cpu", Config: cfg}, {Backend: "c", Device: "cpu", Config: cfg}}
	p.Start(3, 1, cells)
	r := result.Result{Status: result.StatusOK, Config: cfg, CompileMs: 1000, Stats: &result.Stats{MeanMs: 100, MedianMs: 100}}
	p.Cell(Event{Cell: cells[0], Result: r, Took: 2 * time.Second})
	p.Begin("", cells[1])
	p.heartbeat = time.Minute
	var etas []string
	for range 3 {
		clock = clock.Add(time.Minute)
		p.Tick()
		eta, _ := p.eta()
		etas = append(etas, eta)
	}
	if n := strings.Count(out.String(), "still running: b "); n != 3 {
		t.Errorf("%d heartbeat lines, want one a minute:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "(3m0s so far") {
		t.Errorf("heartbeat does not say how long the cell has run:\n%s", out.String())
	}
	// The running cell is already 3 minutes against a 2 s estimate: the
	// last (equal) cell is now expected to take the mean of what its
	// like took so far, (2 s + 180 s) / 2, not 2 s.
	if strings.Join(etas, " ") != "~31s ~1m1s ~1m31s" {
		t.Errorf("ETAs while the slow cell runs: %v; want ~31s ~1m1s ~1m31s", etas)
	}
	var bar bytes.Buffer
	tp := NewProgress(&bar, true)
	tp.now = func() time.Time { return clock }
	tp.start, tp.total, tp.counts, tp.weight, tp.running = clock, 3, map[result.Status]int{}, map[string]float64{}, map[string]runningCell{}
	tp.Begin("", cells[2])
	clock = clock.Add(95 * time.Second)
	tp.Tick()
	if !strings.Contains(bar.String(), "c tiny") || !strings.HasSuffix(bar.String(), " 1m35s") {
		t.Errorf("bar %q does not show the running cell's elapsed time", bar.String()[strings.LastIndex(bar.String(), "\r"):])
	}
}
