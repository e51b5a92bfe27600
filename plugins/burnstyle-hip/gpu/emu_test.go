package gpu_test

import (
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

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
	out, err := gpu.RunProbe(emutest.OpenHIP(t, 32), waveProbe, "probe", 64, 64)
	if err != nil || out[0] != 1 || out[1] != 0 || out[40] != 40 {
		t.Fatalf("wave32: %v %v, want lanes 0 and 1 swapped and lane 40 kept", out[:2], err)
	}
	if _, err := gpu.RunProbe(emutest.OpenHIP(t, 64), waveProbe, "probe", 64, 64); err == nil {
		t.Fatal("wave64: a shuffle half the wavefront reaches ran; the emulator must refuse it")
	} else {
		t.Logf("wave64 refuses it: %v", err)
	}
}
