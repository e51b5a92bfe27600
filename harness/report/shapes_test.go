package report

import (
	"fmt"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all"
	"github.com/xbench/xbench/harness/workload/gemm"
)

// A GEMM folder with more shapes than a per-configuration heat map can
// show gets the per-shape charts instead, and the winners count every shape.
func TestShapeChartsForManyGEMMShapes(t *testing.T) {
	dir := t.TempDir()
	n := 0
	for _, d := range []string{"bfloat16", "float32"} {
		for i := 1; i <= 30; i++ {
			cfg, err := workload.Resolve(gemm.Workload{}, "", map[string]string{"m": fmt.Sprint(16 * i), "n": "256", "k": "512", "dtype": d}, 1, 3)
			if err != nil {
				t.Fatal(err)
			}
			for b, ms := range map[string]float64{"pytorch": 1, "triton": 0.5} {
				samples := []float64{ms, ms, ms}
				st, _ := stats.Summarize(samples)
				r := result.Result{SchemaVersion: result.SchemaVersion, RunID: "r", Backend: b, Status: result.StatusOK, Config: cfg,
					Device: result.Device{Kind: "cuda", Name: "GPU", Count: 1}, SamplesMs: samples, Stats: &st,
					Env: result.Env{Framework: b, Timing: "events"}, Timestamp: "2026-01-01T00:00:00Z"}
				if _, err := store.WriteResult(dir, r); err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
	}
	r, err := Load(dir, "pytorch")
	if err != nil {
		t.Fatal(err)
	}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range charts {
		names[c.Name] = true
	}
	for _, want := range []string{"throughput-per-shape", "shape-winners", "ratio-over-shapes", "roofline"} {
		if !names[want] {
			t.Errorf("no %s chart among %v", want, names)
		}
	}
	if names["ratio-heatmap"] || names["feasibility"] {
		t.Errorf("60 shapes drawn as one row each: %v", names)
	}
}
