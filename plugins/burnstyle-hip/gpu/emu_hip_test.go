package gpu_test

import (
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/check"
)

// TestEmuHIP runs the kernels' AMD path against the float64 references at
// tiny sizes on 64-wide wavefronts (CDNA): the TTT forward of each inner
// model (the portable GEMM kernels doing the dense work, as on rocm, where
// no BLAS is bound), attention (the FMA kernel) and the scan; the training
// step, which needs a BLAS, is refused.
// A wave32 device (RDNA) runs one forward: the rest of wave32 is the CUDA
// emulator's, whose kernels differ from these only in XB_HIP.
func TestEmuHIP(t *testing.T) {
	d := openEmuHIP(t, 64)
	t0 := time.Now()
	verify(t, d, "tiny", "linear", "float32", false, 32, gpu.Options{})
	verify(t, d, "tiny", "mlp", "bfloat16", false, 32, gpu.Options{})
	// The training step's products need a BLAS library, and none is bound
	// on rocm yet: it must be refused, saying so, not attempted.
	cfg := check.Config("tiny", "mlp", "float32", false, 1, 32)
	cfg.Backward = true
	if _, err := check.Verify(d, cfg, 9, gpu.Options{}); err == nil || !strings.Contains(err.Error(), "rocm") {
		t.Errorf("training step on rocm: %v, want a refusal naming rocm", err)
	} else {
		t.Logf("training step on rocm: %v", err)
	}
	t.Logf("wave64: %.1fs", time.Since(t0).Seconds())
	d.Close()

	d32 := openEmuHIP(t, 32)
	verify(t, d32, "tiny", "linear", "bfloat16", false, 32, gpu.Options{})
}

// waveProbe: lanes below 32 shuffle, the rest do not. That is legal on
// a CDNA card too (a width-32 shuffle needs only its 32-lane half), but the
// emulator at wave64 holds every shuffle to whole 64-lane wavefronts, a
// stricter rule that the kernels pass (TestEmuHIP); this probe shows the
// rule is in force, so that passing it means something.
const waveProbe = `
XB_KERNEL void probe(float* out) {
  float v = (float)threadIdx.x;
  if (threadIdx.x < 32) v = XB_SHFL_XOR(v, 1);
  out[threadIdx.x] = v;
}
XB_EXPORT(probe)
`

// TestEmuWavefront shows the wave64 emulation checks something: a shuffle
// only half a wavefront reaches passes at wave32 and is refused at wave64.
func TestEmuWavefront(t *testing.T) {
	out, err := gpu.RunProbe(openEmuHIP(t, 32), waveProbe, "probe", 64, 64)
	if err != nil || out[0] != 1 || out[1] != 0 || out[40] != 40 {
		t.Fatalf("wave32: %v %v, want lanes 0 and 1 swapped and lane 40 kept", out[:2], err)
	}
	if _, err := gpu.RunProbe(openEmuHIP(t, 64), waveProbe, "probe", 64, 64); err == nil {
		t.Fatal("wave64: a shuffle half the wavefront reaches ran; the emulator must refuse it")
	} else {
		t.Logf("wave64 refuses it: %v", err)
	}
}
