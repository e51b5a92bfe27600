package burnstylehip

import (
	"context"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// TestModes: cold-cache GEMM on the CPU runs, records its mode and says
// what it wrote; a CUDA or HIP graph (GEMM on a GPU only), or cold-cache on TTT,
// is unsupported with the reason, before anything runs.
func TestModes(t *testing.T) {
	gemm := result.Config{Workload: "gemm", Phase: "forward", Warmup: 0, Repeats: 2,
		Params: map[string]string{"m": "8", "n": "8", "k": "8", "batch": "1", "layout": "nn", "dtype": "float32"}}
	res, err := New().Run(context.Background(), backend.RunRequest{Workload: "gemm", Device: "cpu", Config: gemm, Mode: result.Mode{ColdCache: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != result.StatusOK || len(res.SamplesMs) != 2 || !res.Mode.ColdCache || !strings.Contains(res.Env.Timing, "MiB host buffer") {
		t.Errorf("cold-cache gemm: status %s, %d samples, mode %+v, timing %q", res.Status, len(res.SamplesMs), res.Mode, res.Env.Timing)
	}
	for _, tc := range []struct {
		name string
		req  backend.RunRequest
		want string
	}{
		{"graph", backend.RunRequest{Workload: "gemm", Device: "cpu", Config: gemm, Mode: result.Mode{CUDAGraph: true}}, "gemm workload on a GPU only"},
		{"graph ttt", backend.RunRequest{Workload: "ttt", Device: "cpu", Config: tinyConfig(), Mode: result.Mode{CUDAGraph: true}}, "--cuda-graph"},
		{"cold ttt", backend.RunRequest{Workload: "ttt", Device: "cpu", Config: tinyConfig(), Mode: result.Mode{ColdCache: true}}, "gemm and attention workloads only"},
	} {
		res, err := New().Run(context.Background(), tc.req)
		if err != nil || res.Status != result.StatusUnsupported || !strings.Contains(res.Message, tc.want) {
			t.Errorf("%s: status %s, message %q, err %v; want unsupported naming %q", tc.name, res.Status, res.Message, err, tc.want)
		}
	}
}
