package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all"
	"github.com/xbench/xbench/harness/workload/ttt"
)

func TestTimingWarnings(t *testing.T) {
	for _, tt := range []struct {
		warmup, repeats int
		want            int
	}{{3, 10, 0}, {2, 10, 1}, {3, 9, 1}, {0, 1, 2}, {10, 1000, 0}} {
		c := ttt.Config{ModelSize: "tiny", TTTType: "linear", Warmup: tt.warmup, Repeats: tt.repeats}.Result()
		if got := TimingWarnings(c); len(got) != tt.want {
			t.Errorf("--warmup %d --repeats %d: %v, want %d warnings", tt.warmup, tt.repeats, got, tt.want)
		}
	}
}

func TestFinalize(t *testing.T) {
	reg, err := registry.Open(registry.Options{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "run-1", Meta{GitCommit: "abc"}, []string{"CUDA_VISIBLE_DEVICES=1"})
	cfg := ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 2, SeqLen: 100, MiniBatch: 4, Dtype: "float32", Backbone: "transformer", Repeats: 3}.Result()
	tests := []struct {
		name       string
		samples    []float64
		status     result.Status
		wantStatus result.Status
		wantMsg    string
		wantWarn   bool
	}{
		{"ok", []float64{10, 10, 10}, result.StatusOK, result.StatusOK, "", false},
		{"noisy", []float64{10, 20, 30}, result.StatusOK, result.StatusOK, "", true},
		{"nan", []float64{1, math.NaN(), 1}, result.StatusOK, result.StatusFailed, "sample 1", false},
		{"negative", []float64{1, -1, 1}, result.StatusOK, result.StatusFailed, "sample 1", false},
		{"empty", nil, result.StatusOK, result.StatusFailed, "no samples", false},
		{"wrong count", []float64{1, 2}, result.StatusOK, result.StatusFailed, "2 samples for --repeats 3", false},
		{"unsupported keeps no stats", nil, result.StatusUnsupported, result.StatusUnsupported, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Finalize(result.Result{Backend: "x", Status: tt.status, Config: cfg, SamplesMs: tt.samples,
				Warnings: []string{"cv above 10%: the backend's own judgement"}})
			if r.Status != tt.wantStatus || !strings.Contains(r.Message, tt.wantMsg) {
				t.Fatalf("status %s message %q; want %s containing %q", r.Status, r.Message, tt.wantStatus, tt.wantMsg)
			}
			if r.RunID != "run-1" || r.Env.GitCommit != "abc" || r.Env.VisibleDevices != "1" || r.SamplesMs == nil || r.SchemaVersion != result.SchemaVersion {
				t.Errorf("not stamped: %+v", r)
			}
			if (r.Stats != nil) != (tt.wantStatus == result.StatusOK) {
				t.Errorf("stats %v for status %s", r.Stats, r.Status)
			}
			if r.Stats != nil && (math.Abs(r.Throughput-200/(r.Stats.MedianMs/1000)) > 1e-9 || r.ThroughputUnit != "tokens/s") {
				t.Errorf("throughput %v %s, want %v tokens/s", r.Throughput, r.ThroughputUnit, 200/(r.Stats.MedianMs/1000))
			}
			if r.Stats == nil && (r.Throughput != 0 || r.ThroughputUnit != "") {
				t.Errorf("throughput %v %s on a %s result", r.Throughput, r.ThroughputUnit, r.Status)
			}
			// cfg has --warmup 0 and --repeats 3: both too few, said once each.
			var ws []string
			timing := 0
			for _, w := range r.Warnings {
				if strings.HasPrefix(w, "--warmup 0 is below 3") || strings.HasPrefix(w, "--repeats 3 is below 10") {
					timing++
					continue
				}
				ws = append(ws, w)
			}
			if want := map[bool]int{true: 2, false: 0}[tt.wantStatus == result.StatusOK]; timing != want {
				t.Errorf("%d timing-rule warnings in %v, want %d", timing, r.Warnings, want)
			}
			if tt.wantStatus == result.StatusOK && (len(ws) > 1 || (len(ws) == 1 && !strings.Contains(ws[0], "is above"))) {
				t.Errorf("backend cv warning not replaced by the harness's: %v", r.Warnings)
			}
			if got := len(ws) > 0 && strings.Contains(ws[0], "is above"); got != tt.wantWarn {
				t.Errorf("warnings %v, want warning %v", r.Warnings, tt.wantWarn)
			}
		})
	}
}

// fakeTP is the TTT workload under another name whose throughput is the
// "tp" parameter, so Finalize can be shown a derived number that cannot be
// true.
type fakeTP struct{ ttt.Workload }

func (fakeTP) Name() string { return "fake-throughput" }

func (fakeTP) Throughput(c result.Config, _ float64) workload.Throughput {
	switch c.Get("tp") {
	case "nan":
		return workload.Throughput{Value: math.NaN(), Unit: "x/s"}
	case "inf":
		return workload.Throughput{Value: math.Inf(1), Unit: "x/s"}
	case "-inf":
		return workload.Throughput{Value: math.Inf(-1), Unit: "x/s"}
	case "negative":
		return workload.Throughput{Value: -5, Unit: "x/s"}
	}
	return workload.Throughput{Value: 7, Unit: "x/s"}
}

func init() { workload.Register(fakeTP{}) }

// A result whose derived throughput is negative, NaN or infinite is saved
// as failed, never ok: samples alone being valid is not enough.
func TestFinalizeImpossibleThroughput(t *testing.T) {
	reg, err := registry.Open(registry.Options{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "run-1", Meta{}, nil)
	tiny := ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 2, SeqLen: 64, MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Repeats: 3}.Result()
	fake := func(tp string) result.Config {
		c := tiny.With("tp", tp)
		c.Workload = "fake-throughput"
		return c
	}
	tests := []struct {
		name    string
		cfg     result.Config
		samples []float64
		ok      bool
	}{
		{"finite positive", fake("fine"), []float64{1, 1, 1}, true},
		{"nan", fake("nan"), []float64{1, 1, 1}, false},
		{"+inf", fake("inf"), []float64{1, 1, 1}, false},
		{"-inf", fake("-inf"), []float64{1, 1, 1}, false},
		{"negative", fake("negative"), []float64{1, 1, 1}, false},
		// Real workload: a negative batch (a config that bypassed Resolve)
		// makes tokens/s negative.
		{"ttt negative tokens", tiny.With(ttt.KeyBatch, "-2"), []float64{1, 1, 1}, false},
		// Real workload: a positive but subnormal median divides to +Inf.
		{"ttt infinite tokens/s", tiny, []float64{5e-324, 5e-324, 5e-324}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Finalize(result.Result{Backend: "x", Status: result.StatusOK, Config: tt.cfg, SamplesMs: tt.samples})
			if tt.ok {
				if r.Status != result.StatusOK || r.Throughput != 7 || r.ThroughputUnit != "x/s" {
					t.Fatalf("status %s throughput %v %s; want ok 7 x/s", r.Status, r.Throughput, r.ThroughputUnit)
				}
				return
			}
			if r.Status != result.StatusFailed || !strings.Contains(r.Message, "throughput") {
				t.Fatalf("status %s message %q; want failed naming the throughput", r.Status, r.Message)
			}
			if r.Stats != nil || r.Throughput != 0 || r.ThroughputUnit != "" {
				t.Errorf("failed result keeps stats %v / throughput %v %s", r.Stats, r.Throughput, r.ThroughputUnit)
			}
		})
	}
}

// run and sweep share Finalize, so a framework's out-of-memory error is
// oom in both, not failed in one and oom in the other.
func TestFinalizeClassifiesOOM(t *testing.T) {
	reg, err := registry.Open(registry.Options{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "r", Meta{}, nil)
	for _, msg := range []string{"RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
		"XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1 GiB"} {
		r := s.Finalize(result.Result{Status: result.StatusFailed, Message: msg, Config: ttt.Config{ModelSize: "tiny"}.Result()})
		if r.Status != result.StatusOOM {
			t.Errorf("%q: status %s, want oom", msg, r.Status)
		}
	}
}

// A result keeps the settings its backend ran under (the problem
// workload's precision flags) beside the harness's own.
func TestFinalizeMergesSettings(t *testing.T) {
	reg, err := registry.Open(registry.Options{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "run-1", Meta{Settings: map[string]string{"HSA_ENABLE_SDMA": "0"}}, nil)
	cfg := ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 16, MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Repeats: 1}.Result()
	r := s.Finalize(result.Result{Backend: "x", Status: result.StatusOK, Config: cfg, SamplesMs: []float64{1},
		Env: result.Env{Settings: map[string]string{"precision": "kernelbench"}}})
	if r.Env.Settings["precision"] != "kernelbench" || r.Env.Settings["HSA_ENABLE_SDMA"] != "0" {
		t.Errorf("settings %v, want the backend's and the harness's", r.Env.Settings)
	}
	if len(s.Meta.Settings) != 1 {
		t.Errorf("the session's own settings changed: %v", s.Meta.Settings)
	}
}
