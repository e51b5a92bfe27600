package sweep_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/sweep"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// TestFaultsInABatchThroughRealProcesses: batches through the real plugin
// process (gRPC) and the fault backend's run_batch (JSON lines), in this
// test's process. A crash in a batch is blamed on its own cell alone, the
// batch's other cells get their results; a failed result in a batch is run
// again on its own, and the cells after it in a fresh process; a batch
// without trouble records "batch of N" in every result.
func TestFaultsInABatchThroughRealProcesses(t *testing.T) {
	sess := faultSession(t)
	sess.StartTimeout = 2 * time.Minute // a slow Python start must not turn into a cell's timeout
	cell := func(seq int) sweep.Cell {
		dtype := "float32"
		if seq == 0 { // outside the backend's capabilities: answered unsupported, not sent
			seq, dtype = 16, "float64"
		}
		return sweep.Cell{Backend: "faulty", Device: "cpu", Config: ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1,
			SeqLen: seq, MiniBatch: 16, Dtype: dtype, Backbone: "transformer", Repeats: 3}.Result()}
	}
	const whole, ended, after = "alone: its batch of 5 failed as a whole", "alone: it ended failed in a batch of 4", "alone: a cell before it"
	tests := []struct {
		name string
		seqs []int
		// seq-len and dtype ("16f32") -> status, a space and what its
		// dispatch setting starts with; nothing after the space: no setting.
		want map[string]string
	}{
		// 32 crashes the process (exit 3) in the middle of the batch.
		{"crash", []int{16, 32, 144, 160, 176}, map[string]string{"16f32": "ok " + whole, "32f32": "failed " + whole,
			"144f32": "ok " + whole, "160f32": "ok " + whole, "176f32": "ok " + whole}},
		// 64 answers a result that breaks the schema: failed, in its slot.
		{"failed result", []int{16, 64, 144, 160}, map[string]string{"16f32": "ok batch of 4", "64f32": "failed " + ended,
			"144f32": "ok " + after, "160f32": "ok " + after}},
		{"no trouble", []int{16, 144, 160, 0}, map[string]string{"16f32": "ok batch of 3", "144f32": "ok batch of 3",
			"160f32": "ok batch of 3", "16f64": "unsupported "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var plan []sweep.Cell
			for _, s := range tt.seqs {
				plan = append(plan, cell(s))
			}
			sweep.Order(plan)
			opts := sweep.Options{Timeout: time.Minute, CellsPerCall: 16}
			if _, err := sweep.Run(context.Background(), sweep.NewFolder(dir), plan, []sweep.Worker{{Exec: sess}}, opts); err != nil {
				t.Fatal(err)
			}
			snap, err := sweep.Read(sweep.NewFolder(dir))
			if err != nil || len(snap.Cells) != len(plan) {
				t.Fatalf("%d cells read (%v), want %d", len(snap.Cells), err, len(plan))
			}
			for _, e := range snap.Cells {
				r := e.Result
				got := string(r.Status) + " " + r.Env.Settings[bench.DispatchSetting]
				id := fmt.Sprintf("%df%s", r.Config.Int("seq_len"), strings.TrimPrefix(r.Config.Get("dtype"), "float"))
				want, ok := tt.want[id]
				if !ok || !strings.HasPrefix(got, want) || strings.HasSuffix(want, " ") != strings.HasSuffix(got, " ") {
					t.Errorf("seq %d: %q (%s), want %q...", r.Config.Int("seq_len"), got, r.Message, want)
				}
				if r.Status == result.StatusFailed && tt.name == "crash" &&
					(!strings.Contains(r.Message, "exit status 3") || !strings.Contains(r.Tail, "crashing on purpose")) {
					t.Errorf("the crashed cell: message %q, tail %q; want the exit and its last words", r.Message, r.Tail)
				}
			}
		})
	}
}
