package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
)

// fake runs cells instantly with a status chosen per seq-len and records
// every call.
type fake struct {
	mu       sync.Mutex
	status   map[int]result.Status // by seq-len; ok otherwise
	message  map[int]string
	runs     map[string]int
	restarts []string
	onRun    func(c Cell) // called before each run (to interrupt)
}

func newFake() *fake {
	return &fake{status: map[int]result.Status{}, message: map[int]string{}, runs: map[string]int{}}
}

func (f *fake) Run(ctx context.Context, name, device string, cfg result.Config, _ time.Duration) result.Result {
	c := Cell{Backend: name, Device: device, Config: cfg}
	if f.onRun != nil {
		f.onRun(c)
	}
	f.mu.Lock()
	f.runs[c.Key()]++
	st, ok := f.status[cfg.Int("seq_len")]
	msg := f.message[cfg.Int("seq_len")]
	f.mu.Unlock()
	if !ok {
		st = result.StatusOK
	}
	r := result.Result{Backend: name, Status: st, Message: msg, Config: cfg, Device: result.Device{Kind: "cpu"}}
	if ctx.Err() != nil {
		r.Status, r.Message = result.StatusFailed, ctx.Err().Error()
	}
	if r.Status == result.StatusOK {
		r.SamplesMs = []float64{1, 2, 3}
	}
	return f.Finalize(r)
}

func (f *fake) Finalize(r result.Result) result.Result {
	r.SchemaVersion, r.RunID, r.Timestamp = result.SchemaVersion, "test", "2026-01-01T00:00:00Z"
	if r.SamplesMs == nil {
		r.SamplesMs = []float64{}
	}
	if r.Status == result.StatusOK {
		st, _ := stats.Summarize(r.SamplesMs)
		r.Stats = &st
	}
	return r
}

func (f *fake) Restart(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restarts = append(f.restarts, name)
}

func (f *fake) Close() {}

func plan(backend string, sizes []string, seqs []int) []Cell {
	var out []Cell
	for _, s := range sizes {
		for _, l := range seqs {
			out = append(out, cell(backend, s, l))
		}
	}
	Order(out)
	return out
}

func statuses(t *testing.T, dir string) map[string]result.Status {
	t.Helper()
	snap, err := Read(NewFolder(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Invalid) > 0 {
		t.Fatalf("invalid cell files: %v", snap.Invalid[0].Err)
	}
	out := map[string]result.Status{}
	for _, e := range snap.Cells {
		out[e.Key] = e.Result.Status
	}
	return out
}

func TestLargerCellsSkippedAfterOOMOrTimeout(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	f.status[128] = result.StatusOOM
	f.status[96] = result.StatusTimeout // only on the 125m cell below: tiny@96 is not in the plan
	p := plan("b", []string{"tiny", "125m"}, []int{64, 128, 256})
	p = append(p, cell("b", "125m", 96), cell("other", "125m", 256))
	Order(p)
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{}); err != nil {
		t.Fatal(err)
	}
	got := statuses(t, dir)
	want := map[string]result.Status{
		cell("b", "tiny", 64).Key():      result.StatusOK,
		cell("b", "tiny", 128).Key():     result.StatusOOM,
		cell("b", "tiny", 256).Key():     result.StatusSkipped,
		cell("b", "125m", 64).Key():      result.StatusOK, // shorter than the OOM: still run
		cell("b", "125m", 96).Key():      result.StatusTimeout,
		cell("b", "125m", 128).Key():     result.StatusSkipped,
		cell("b", "125m", 256).Key():     result.StatusSkipped,
		cell("other", "125m", 256).Key(): result.StatusOK, // another backend is not affected
	}
	for k, st := range want {
		if got[k] != st {
			t.Errorf("%s: status %q, want %q", k, got[k], st)
		}
		if st == result.StatusSkipped && f.runs[k] != 0 {
			t.Errorf("%s was skipped but ran %d times", k, f.runs[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d cell files, want %d", len(got), len(want))
	}
}

func TestInterruptedSweepResumesWithoutRerunning(t *testing.T) {
	dir := t.TempDir()
	p := plan("b", []string{"tiny"}, []int{16, 32, 48, 64, 80, 96})
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	f.onRun = func(c Cell) {
		if c.Config.Int("seq_len") == 64 {
			cancel() // interrupted while the fourth cell runs
		}
	}
	_, err := Run(ctx, NewFolder(dir), p, []Worker{{Exec: f}}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sweep returned %v, want context.Canceled", err)
	}
	if got := len(statuses(t, dir)); got != 3 {
		t.Fatalf("after the interrupt %d cells have files, want 3 (the interrupted one must not be recorded)", got)
	}
	f.onRun = nil
	sum, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Existing != 3 || sum.Written[result.StatusOK] != 3 {
		t.Errorf("rerun: %d existing, %v written; want 3 existing, 3 ok", sum.Existing, sum.Written)
	}
	for _, c := range p {
		want := 1
		if c.Config.Int("seq_len") == 64 {
			want = 2 // interrupted once, then run for real
		}
		if f.runs[c.Key()] != want {
			t.Errorf("%s ran %d times, want %d", c.Key(), f.runs[c.Key()], want)
		}
	}
	if got := statuses(t, dir); len(got) != len(p) {
		t.Errorf("%d cells have files, want %d", len(got), len(p))
	}
	// A third run has nothing to do; --force runs everything again.
	if sum, _ := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{}); sum.Existing != len(p) || len(sum.Written) != 0 {
		t.Errorf("finished sweep rerun: %d existing, %v written", sum.Existing, sum.Written)
	}
	if sum, _ := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{Force: true}); sum.Written[result.StatusOK] != len(p) {
		t.Errorf("--force wrote %v, want %d ok", sum.Written, len(p))
	}
}

func TestFailuresAreClassifiedRestartedAndKeepTheirTail(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	f.status[32], f.message[32] = result.StatusFailed, "run: backend error: RuntimeError: CUDA out of memory"
	f.status[48], f.message[48] = result.StatusFailed, "segfault"
	tails := NewTails()
	f.onRun = func(c Cell) { tails.Accept("xbench.b.xbench", 3 /* info */, "line of "+Describe(c)) }
	p := []Cell{cell("b", "tiny", 16), cell("b", "tiny", 48), cell("c", "tiny", 32)}
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f, Tails: tails}}, Options{}); err != nil {
		t.Fatal(err)
	}
	snap, _ := Read(NewFolder(dir))
	byKey := map[string]result.Result{}
	for _, e := range snap.Cells {
		byKey[e.Key] = e.Result
	}
	if r := byKey[cell("c", "tiny", 32).Key()]; r.Status != result.StatusOOM {
		t.Errorf("CUDA out of memory error became %s, want oom", r.Status)
	}
	failed := byKey[cell("b", "tiny", 48).Key()]
	if failed.Status != result.StatusFailed || !strings.Contains(failed.Tail, "line of b tiny linear float32 L=48 on cpu") {
		t.Errorf("failed cell: status %s, tail %q; want failed with the backend's line of that cell", failed.Status, failed.Tail)
	}
	if strings.Contains(failed.Tail, "L=16") {
		t.Errorf("failed cell's tail holds output of an earlier cell: %q", failed.Tail)
	}
	if got := strings.Join(slices.Sorted(slices.Values(f.restarts)), ","); got != "b,c" {
		t.Errorf("restarts %v, want b and c (after the failed and the oom cell, not the ok one)", f.restarts)
	}
}

func TestWorkersRunEveryCellOnce(t *testing.T) {
	dir := t.TempDir()
	p := plan("b", []string{"tiny", "125m"}, []int{16, 32, 48, 64, 80, 96, 112, 128})
	f := newFake()
	workers := []Worker{{Name: "gpu 0", Exec: f}, {Name: "gpu 1", Exec: f}, {Name: "gpu 2", Exec: f}}
	var out bytes.Buffer
	if _, err := Run(context.Background(), NewFolder(dir), p, workers, Options{Progress: NewProgress(&out, false)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range p {
		if f.runs[c.Key()] != 1 {
			t.Errorf("%s ran %d times", c.Key(), f.runs[c.Key()])
		}
	}
	if !strings.Contains(out.String(), "16 of 16 cells have a file (ok 16)") {
		t.Errorf("progress output lacks the final count:\n%s", out.String())
	}
}

func TestShardsSeeEachOthersCells(t *testing.T) {
	dir := t.TempDir()
	p := plan("b", []string{"tiny"}, []int{16, 32, 48, 64})
	f := newFake()
	f.status[16] = result.StatusOOM
	// Shard 0 of 2 gets l16 and l48; shard 1 gets l32 and l64, which are
	// larger than shard 0's out-of-memory cell.
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{Shard: 0, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{Shard: 1, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	got := statuses(t, dir)
	for _, l := range []int{32, 48, 64} {
		if k := cell("b", "tiny", l).Key(); got[k] != result.StatusSkipped {
			t.Errorf("l%d: %s, want skipped after shard 0's oom", l, got[k])
		}
	}
	snap, _ := Read(NewFolder(dir))
	if len(snap.Pending) != 0 || !snap.HasPlan {
		t.Errorf("pending %d (plan %v), want none", len(snap.Pending), snap.HasPlan)
	}
}

func TestInvalidCellFileIsRerunAndReported(t *testing.T) {
	dir := t.TempDir()
	p := plan("b", []string{"tiny"}, []int{16, 32})
	bad := filepath.Join(dir, p[1].Key()+".json")
	if err := os.WriteFile(bad, []byte(`{"status": "ok"`), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := Read(NewFolder(dir))
	if err != nil || len(snap.Invalid) != 1 || len(snap.Cells) != 0 {
		t.Fatalf("snapshot of a folder with one broken file: %d invalid, %d cells, %v", len(snap.Invalid), len(snap.Cells), err)
	}
	var status bytes.Buffer
	_ = WriteStatus(&status, snap)
	if !strings.Contains(status.String(), "invalid cell file") {
		t.Errorf("--status does not report the broken file:\n%s", status.String())
	}
	f := newFake()
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := statuses(t, dir); got[p[1].Key()] != result.StatusOK {
		t.Errorf("broken cell after rerun: %q, want ok", got[p[1].Key()])
	}
}

func TestClearFailures(t *testing.T) {
	dir := t.TempDir()
	p := plan("b", []string{"tiny"}, []int{16, 32, 48, 64})
	f := newFake()
	f.status[16], f.status[32] = result.StatusUnsupported, result.StatusFailed
	f.status[48] = result.StatusTimeout // and l64 is skipped after it
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{}); err != nil {
		t.Fatal(err)
	}
	removed, err := NewFolder(dir).ClearFailures()
	if err != nil || len(removed) != 3 {
		t.Fatalf("cleared %v (%v), want the failed, timeout and skipped cells", removed, err)
	}
	got := statuses(t, dir)
	if len(got) != 1 || got[p[0].Key()] != result.StatusUnsupported {
		t.Errorf("left %v, want only the unsupported cell", got)
	}
}

func TestLockExcludesASecondSweep(t *testing.T) {
	dir := t.TempDir()
	whole, err := LockFolder(dir, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var busy *BusyError
	if _, err := LockFolder(dir, 0, 1); !errors.As(err, &busy) || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("second whole sweep: %v, want a BusyError naming the holder", err)
	}
	if _, err := LockFolder(dir, 1, 4); !errors.As(err, &busy) {
		t.Errorf("shard while a whole sweep runs: %v, want BusyError", err)
	}
	whole.Release()
	s0, err := LockFolder(dir, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := LockFolder(dir, 1, 4)
	if err != nil {
		t.Errorf("two shards of one sweep must run together: %v", err)
	} else {
		s1.Release()
	}
	if _, err := LockFolder(dir, 0, 4); !errors.As(err, &busy) {
		t.Errorf("shard 0 twice: %v, want BusyError", err)
	}
	if _, err := LockFolder(dir, 0, 1); !errors.As(err, &busy) {
		t.Errorf("whole sweep while a shard runs: %v, want BusyError", err)
	}
	s0.Release()
}

func TestCSVAndStatus(t *testing.T) {
	dir := t.TempDir()
	p := plan("b", []string{"tiny"}, []int{16, 32})
	f := newFake()
	f.status[32], f.message[32] = result.StatusFailed, "broke\nsecond line"
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{}); err != nil {
		t.Fatal(err)
	}
	snap, err := Read(NewFolder(dir))
	if err != nil {
		t.Fatal(err)
	}
	var csvOut, status bytes.Buffer
	if err := WriteCSV(&csvOut, snap); err != nil {
		t.Fatal(err)
	}
	// export's CSV format: one row per cell, the message whole (quoted, so
	// its newline stays inside the field).
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("csv (%v):\n%s", err, csvOut.String())
	}
	if got := strings.Join(rows[0], ","); !strings.HasPrefix(got, "run_id,backend,status,workload,phase,model_size,ttt_type,batch,seq_len,mini_batch,dtype,backbone,device_kind,") {
		t.Fatalf("csv header: %s", got)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	ok, failed := rows[1], rows[2]
	if got := strings.Join(ok[1:13], ","); got != "b,ok,ttt,forward,tiny,linear,1,16,16,float32,transformer,cpu" || ok[col["n_samples"]] != "3" || ok[col["median_ms"]] == "" {
		t.Errorf("ok row: %v", ok)
	}
	if failed[col["status"]] != "failed" || failed[col["seq_len"]] != "32" || failed[col["n_samples"]] != "0" || failed[col["median_ms"]] != "" ||
		failed[col["message"]] != "broke\nsecond line" {
		t.Errorf("failed row (no stats, the message): %v", failed)
	}
	if err := WriteStatus(&status, snap); err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(strings.Split(status.String(), "\n")[1])
	if strings.Join(fields, " ") != "b 1 0 0 1 0 0 0" {
		t.Errorf("status row %q, want b with 1 ok and 1 failed:\n%s", fields, status.String())
	}
}

// A cell file named by an older key (before absolute folders were hashed
// into names) still counts as that cell: a rerun does not run it again,
// and --clear-failures finds it by its own name.
func TestCellUnderAnOlderNameCountsAsDone(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	p := plan("b", []string{"tiny"}, []int{16})
	if _, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{}); err != nil {
		t.Fatal(err)
	}
	key := p[0].Key()
	old := filepath.Join(dir, "old-style-name__cpu.json")
	if err := os.Rename(filepath.Join(dir, key+".json"), old); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{})
	if err != nil || sum.Existing != 1 || f.runs[key] != 1 {
		t.Fatalf("rerun: %d existing, %d runs of the cell, %v; want the old-named file to count", sum.Existing, f.runs[key], err)
	}
	if st := statuses(t, dir); st["old-style-name__cpu"] != result.StatusOK {
		t.Errorf("snapshot %v does not hold the old-named cell", st)
	}
}

// TestBudgetStopsBeginningCellsAndLeavesTheRestForARerun: with a budget,
// cells are begun cheapest first until it is spent; the rest keep no file
// and are counted by backend, and a rerun without a budget runs only them.
func TestBudgetStopsBeginningCellsAndLeavesTheRestForARerun(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	f.onRun = func(Cell) { now = now.Add(time.Minute) } // every cell takes a minute
	p := plan("b", []string{"tiny"}, []int{16, 32, 64, 128, 256})
	p = append(p, cell("c", "tiny", 512))
	Order(p)
	opts := Options{Budget: 150 * time.Second, now: func() time.Time { return now }}
	sum, err := Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// begun at 0, 1m and 2m; at 3m the 2m30s budget is spent
	if got := len(statuses(t, dir)); got != 3 {
		t.Fatalf("%d cells have a file, want 3", got)
	}
	if sum.LeftCount() != 3 || sum.Left["b"]+sum.Left["c"] != 3 {
		t.Fatalf("left %v, want 3 cells", sum.Left)
	}
	for _, c := range p[:3] {
		if f.runs[c.Key()] != 1 {
			t.Errorf("cheap cell %s ran %d times, want 1", c.Key(), f.runs[c.Key()])
		}
	}
	sum, err = Run(context.Background(), NewFolder(dir), p, []Worker{{Exec: f}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Existing != 3 || sum.LeftCount() != 0 || len(statuses(t, dir)) != len(p) {
		t.Fatalf("rerun: existing %d, left %v, files %d", sum.Existing, sum.Left, len(statuses(t, dir)))
	}
	for _, c := range p {
		if f.runs[c.Key()] != 1 {
			t.Errorf("%s ran %d times over both invocations, want 1", c.Key(), f.runs[c.Key()])
		}
	}
}

func TestETASaysWhenTheBudgetEndsFirst(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, false)
	p.heartbeat = 0
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	p.now = func() time.Time { return now }
	cells := plan("b", []string{"tiny"}, []int{16, 32, 64, 128})
	p.Start(len(cells), 1, cells)
	p.SetDeadline(t0.Add(90 * time.Second))
	for _, c := range cells[:1] {
		p.Begin("", c)
		now = now.Add(time.Minute)
		p.Cell(Event{Cell: c, Result: result.Result{Status: result.StatusFailed}, Took: time.Minute})
	}
	if !strings.Contains(out.String(), "> --budget left 30s") {
		t.Fatalf("the ETA does not say the budget ends first:\n%s", out.String())
	}
}
