package burnstylehip

import (
	"context"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/host"
)

// Every workload's CPU path checks its memory estimate before it
// allocates: with 64 KiB available, a cell that needs more is answered oom
// with both sizes, instead of the Go runtime aborting the process
// ("fatal error: out of memory"). With real memory the same small cells run.
func TestCPUPathsAnswerOOMBeforeAllocating(t *testing.T) {
	gemm := result.Config{Workload: "gemm", Phase: "forward", Warmup: 0, Repeats: 2,
		Params: map[string]string{"m": "128", "n": "128", "k": "128", "batch": "1", "layout": "nn", "dtype": "float32"}}
	scanCfg := result.Config{Workload: "scan", Phase: "forward", Warmup: 0, Repeats: 2,
		Params: map[string]string{"T": "256", "K": "8", "C": "16", "batch": "8", "semiring": "log", "dtype": "float64"}}
	attn := attnConfig("seq_len", "64")
	for _, cfg := range []result.Config{gemm, scanCfg, attn} {
		t.Run(cfg.Workload, func(t *testing.T) {
			host.Available = func() int64 { return 64 << 10 }
			defer func() { host.Available = host.MemAvailable }()
			res, err := New().Run(context.Background(), backend.RunRequest{Workload: cfg.Workload, Device: "cpu", Config: cfg})
			if err != nil || res.Status != result.StatusOOM || !strings.Contains(res.Message, "GiB of host memory, 0.0 GiB available") ||
				len(res.SamplesMs) != 0 {
				t.Fatalf("with 64 KiB: %v, status %s %q; want oom naming the sizes", err, res.Status, res.Message)
			}
			host.Available = host.MemAvailable
			res, err = New().Run(context.Background(), backend.RunRequest{Workload: cfg.Workload, Device: "cpu", Config: cfg})
			if err != nil || res.Status != result.StatusOK {
				t.Fatalf("with the host's memory: %v, status %s %q", err, res.Status, res.Message)
			}
		})
	}
}

// A GEMM far beyond any host (three 2^20 x 2^20 float32 matrices, 12 TiB)
// is oom at once on this machine's real memory, with nothing allocated.
func TestHugeGEMMIsOOMNotACrash(t *testing.T) {
	cfg := result.Config{Workload: "gemm", Phase: "forward", Warmup: 0, Repeats: 2,
		Params: map[string]string{"m": "1048576", "n": "1048576", "k": "1048576", "batch": "1", "layout": "nn", "dtype": "float32"}}
	res, err := New().Run(context.Background(), backend.RunRequest{Workload: "gemm", Device: "cpu", Config: cfg})
	if err != nil || res.Status != result.StatusOOM || !strings.Contains(res.Message, "gemm on the CPU needs about") {
		t.Fatalf("%v, status %s %q; want oom", err, res.Status, res.Message)
	}
}
