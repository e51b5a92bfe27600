package ttt_test

import (
	"strings"
	"testing"
	"time"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// TestEmuHIP runs the kernels' AMD path against the float64 references at
// tiny sizes on 64-wide wavefronts (CDNA): the TTT forward of each inner
// model (the portable GEMM kernels doing the dense work, as on rocm, where
// no BLAS is bound); the training step, which needs a BLAS, is refused.
// (Attention and the scan run theirs in their packages.)
// A wave32 device (RDNA) runs one forward: the rest of wave32 is the CUDA
// emulator's, whose kernels differ from these only in XB_HIP.
func TestEmuHIP(t *testing.T) {
	d := openEmuHIP(t, 64)
	t0 := time.Now()
	verify(t, d, "tiny", "linear", "float32", false, 32, gputtt.Options{})
	verify(t, d, "tiny", "mlp", "bfloat16", false, 32, gputtt.Options{})
	// The training step's products need a BLAS library, and none is bound
	// on rocm yet: it must be refused, saying so, not attempted.
	cfg := check.Config("tiny", "mlp", "float32", false, 1, 32)
	cfg.Backward = true
	if _, err := check.Verify(d, cfg, 9, gputtt.Options{}); err == nil || !strings.Contains(err.Error(), "rocm") {
		t.Errorf("training step on rocm: %v, want a refusal naming rocm", err)
	} else {
		t.Logf("training step on rocm: %v", err)
	}
	t.Logf("wave64: %.1fs", time.Since(t0).Seconds())
	d.Close()

	d32 := openEmuHIP(t, 32)
	verify(t, d32, "tiny", "linear", "bfloat16", false, 32, gputtt.Options{})
}
