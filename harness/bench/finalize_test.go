package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
)

func TestFinalize(t *testing.T) {
	reg, err := registry.Open(registry.Options{Root: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(reg, "run-1", Meta{GitCommit: "abc"}, []string{"CUDA_VISIBLE_DEVICES=1"})
	cfg := result.Config{Batch: 2, SeqLen: 100, Repeats: 3}
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
			if r.Stats != nil && math.Abs(r.TokensPerS-200/(r.Stats.MedianMs/1000)) > 1e-9 {
				t.Errorf("tokens/s %v", r.TokensPerS)
			}
			if tt.wantStatus == result.StatusOK && (len(r.Warnings) > 1 || (len(r.Warnings) == 1 && !strings.Contains(r.Warnings[0], "is above"))) {
				t.Errorf("backend cv warning not replaced by the harness's: %v", r.Warnings)
			}
			if got := len(r.Warnings) > 0 && strings.Contains(r.Warnings[0], "is above"); got != tt.wantWarn {
				t.Errorf("warnings %v, want warning %v", r.Warnings, tt.wantWarn)
			}
		})
	}
}
