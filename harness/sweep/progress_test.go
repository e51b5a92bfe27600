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
