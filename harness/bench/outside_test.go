package bench

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
)

func TestBurstCalls(t *testing.T) {
	tests := []struct {
		medianMs float64
		want     int
	}{
		{0.05, 1000},       // 2000 wanted for 100 ms: capped
		{0.1, 1000},        // exactly the cap
		{1, 100},           // 100 calls of 1 ms
		{0.7, 143},         // rounded up
		{40, 3},            // a slow call: few calls
		{1000, 1},          // slower than the target: one call
		{0.0001, 1000},     // a patched clock's median asks for the most
		{0, 1000},          // no time at all: the most
		{math.NaN(), 1000}, // not a number: the most
		{math.Inf(1), 1000},
	}
	for _, tt := range tests {
		if got := BurstCalls(tt.medianMs); got != tt.want {
			t.Errorf("BurstCalls(%v) = %d, want %d", tt.medianMs, got, tt.want)
		}
	}
}

func TestBurstLimit(t *testing.T) {
	tests := []struct {
		medianMs float64
		calls    int
		want     time.Duration
	}{
		{0.1, 1000, 5 * time.Second},             // an honest 100 ms round: the least limit
		{0.02, 1000, 5 * time.Second},            // a patched clock's round is ended at the least limit
		{0, 1000, 5 * time.Second},               // no median: the least limit
		{math.Inf(1), 1, 5 * time.Second},        // not finite: the least limit
		{2000, 1, 16 * time.Second},              // one call of 2 s: 2 x 2000 / 0.25
		{0.0001, burstMaxCalls, 5 * time.Second}, // the reviewer's 0.0001 ms
	}
	for _, tt := range tests {
		got := BurstLimit(tt.medianMs, tt.calls)
		if got != tt.want {
			t.Errorf("BurstLimit(%v, %d) = %v, want %v", tt.medianMs, tt.calls, got, tt.want)
		}
		// At the limit the lower bound must refuse the cell, or ending
		// the burst would let it pass.
		if OutsideVerdict(tt.medianMs, backend.BurstReport{Calls: tt.calls, WallMs: float64(got.Milliseconds()), Unfinished: true}) == "" &&
			tt.medianMs > 0 && !math.IsInf(tt.medianMs, 0) {
			t.Errorf("BurstLimit(%v, %d) = %v: a burst ended there is not refused", tt.medianMs, tt.calls, got)
		}
	}
}

func TestOutsideVerdict(t *testing.T) {
	tests := []struct {
		name             string
		medianMs, wallMs float64
		calls            int
		unfinished       bool
		want             string // "" for agreement, else the message's start
	}{
		{"honest, equal", 0.15, 300, 2000, false, ""},
		{"honest, burst slower under load", 0.15, 450, 1000, false, ""}, // ratio 0.33
		{"at the threshold", 0.25, 1000, 1000, false, ""},               // ratio exactly 0.25
		{"just below the threshold", 0.2499, 1000, 1000, false, ClassOutsideClock + ": samples median 0.2499 ms, outside 1 ms a call over 1000 calls"},
		{"samples slower than the burst", 2, 300, 300, false, ""}, // cold cache, a loaded sample: never a cheat
		{"patched clock", 0.0001, 150, 1000, false, ClassOutsideClock + ": samples median 0.0001 ms, outside 0.15 ms a call over 1000 calls"},
		{"clock slowed 10x", 0.015, 150, 1000, false, ClassOutsideClock + ": samples median 0.015 ms"},
		{"ended at its limit", 0.02, 1000, 1000, true, ClassOutsideClock + ": samples median 0.02 ms, outside more than 1 ms a call: 1000 calls did not finish within 1s"},
		{"no calls made", 0.0001, 150, 0, false, ""}, // nothing to compare: not a verdict
		{"no wall time", 0.0001, 0, 1000, false, ""},
	}
	for _, tt := range tests {
		got := OutsideVerdict(tt.medianMs, backend.BurstReport{Calls: tt.calls, WallMs: tt.wallMs, Unfinished: tt.unfinished})
		if (got == "") != (tt.want == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: verdict %q, want %q", tt.name, got, tt.want)
		}
	}
}

// burster is a backend whose burst answers what the test says; the check
// around it is what is tested.
type burster struct {
	backend.Backend
	rep backend.BurstReport
	err error
	got backend.BurstRequest
}

func (b *burster) Burst(_ context.Context, req backend.BurstRequest) (backend.BurstReport, error) {
	b.got = req
	return b.rep, b.err
}

type noBurst struct{ backend.Backend }

func TestOutsideCheck(t *testing.T) {
	reg, err := registry.Open(registry.Options{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "r", Meta{}, nil)
	timed := func(kind string) result.Result {
		return s.Finalize(result.Result{Backend: "candidates", Status: result.StatusOK, Device: result.Device{Kind: kind},
			Config: result.Config{Workload: "problem", Repeats: 3}, SamplesMs: []float64{0.0001, 0.0001, 0.0001}})
	}
	tests := []struct {
		name       string
		b          backend.Backend
		kind       string
		wantStatus result.Status
		want       string // in the message (failed) or the setting (ok)
	}{
		{"patched clock refused", &burster{rep: backend.BurstReport{Status: result.StatusOK, Calls: 1000, WallMs: 150}}, "cpu",
			result.StatusFailed, ClassOutsideClock + ": samples median 0.0001 ms, outside 0.15 ms a call over 1000 calls"},
		{"agreeing clock passes", &burster{rep: backend.BurstReport{Status: result.StatusOK, Calls: 1000, WallMs: 0.1}}, "cpu",
			result.StatusOK, "median 0.0001 ms, outside 0.0001 ms a call over 1000 calls (ratio 1)"},
		{"burst prepared and failed", &burster{rep: backend.BurstReport{Status: result.StatusFailed, Message: "incorrect: max abs err 3"}}, "cpu",
			result.StatusFailed, "outside clock check could not run: its burst ended failed: incorrect: max abs err 3"},
		{"burst broke", &burster{err: errors.New("burst: reply has no burst object")}, "cpu",
			result.StatusFailed, "outside clock check could not run: burst: reply has no burst object"},
		{"backend declines", &burster{err: backend.ErrCannotBurst}, "cpu", result.StatusOK, "not checked: cannot burst"},
		{"backend without the op", &noBurst{}, "cpu", result.StatusOK, "not checked: the backend has no burst op"},
		{"not on a GPU", &burster{rep: backend.BurstReport{Status: result.StatusOK, Calls: 1000, WallMs: 150}}, "cuda",
			result.StatusOK, "not checked: a cuda call's device time is below its wall time by design"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.outsideCheck(context.Background(), tt.b, backend.RunRequest{Device: tt.kind}, timed(tt.kind))
			if got.Status != tt.wantStatus {
				t.Fatalf("status %s (%q), want %s", got.Status, got.Message, tt.wantStatus)
			}
			text := got.Env.Settings[OutsideClockSetting]
			if got.Status != result.StatusOK {
				text = got.Message
				if len(got.SamplesMs) != 0 || got.Stats != nil {
					t.Errorf("a refused cell keeps samples %v or stats %+v", got.SamplesMs, got.Stats)
				}
			}
			if !strings.HasPrefix(text, tt.want) {
				t.Errorf("got %q, want it to start with %q", text, tt.want)
			}
			if b, ok := tt.b.(*burster); ok && tt.kind == "cpu" && (b.got.Calls != BurstCalls(0.0001) || b.got.Rounds != burstRounds ||
				b.got.Limit != BurstLimit(0.0001, b.got.Calls)) {
				t.Errorf("burst asked for %d rounds of %d calls within %v, want %d of %d within %v", b.got.Rounds, b.got.Calls, b.got.Limit,
					burstRounds, BurstCalls(0.0001), BurstLimit(0.0001, BurstCalls(0.0001)))
			}
		})
	}
}

// A process_per_cell backend never gets two cells in one batch: the batch
// is declined before any process starts, and the sweep runs them alone.
func TestRunBatchRefusedForProcessPerCell(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plugins", "untrusted")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name":"untrusted","runtime":"exec","entry":"missing-program","process_per_cell":true}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(registry.Options{Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "r", Meta{}, nil)
	defer s.Close()
	_, err = s.RunBatch(context.Background(), "untrusted", make([]backend.RunRequest, 2), 0)
	if !errors.Is(err, backend.ErrCannotBatch) || !strings.Contains(err.Error(), "process_per_cell") {
		t.Fatalf("error %v, want ErrCannotBatch naming process_per_cell", err)
	}
	if len(s.started) != 0 {
		t.Errorf("a process was started for a batch that cannot run: %v", s.started)
	}
}

// The cell's own deadline passing during the burst is the cell's timeout,
// not a verdict on its clock.
func TestOutsideCheckCellDeadline(t *testing.T) {
	reg, err := registry.Open(registry.Options{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "r", Meta{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := s.Finalize(result.Result{Backend: "candidates", Status: result.StatusOK, Device: result.Device{Kind: "cpu"},
		Config: result.Config{Workload: "problem", Repeats: 3}, SamplesMs: []float64{1, 1, 1}})
	got := s.outsideCheck(ctx, &burster{err: context.Canceled}, backend.RunRequest{Device: "cpu"}, res)
	if got.Status != result.StatusTimeout || !strings.HasPrefix(got.Message, "the cell's deadline passed during its outside clock check") {
		t.Fatalf("%s %q, want a timeout naming the outside clock check", got.Status, got.Message)
	}
}
