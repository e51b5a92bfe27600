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

// mbarrierProbe: thread 0 arms an mbarrier for want bytes; threads 1 to 4
// each st.async 4 bytes into a slot (thread 3 before the arming, taking the
// transaction count below zero, as a remote CTA may); every thread waits for
// the phase, then reads the slots. The emulator's form of what the cluster
// kernel's exchange 3 does with PTX (gpu/ttt/kernels/inner_cluster.cuh).
const mbarrierProbe = `
XB_KERNEL void probe(float* out) {
  __shared__ unsigned long long mb;
  __shared__ float slot[4];
  const int t = threadIdx.x;
  if (t == 0) emu_mb_init(&mb, 1);
  __syncthreads();
  if (t == 3) { const float v = 30.f; emu_st_async(&slot[2], &v, 4, &mb); }
  if (t == 0) emu_mb_expect(&mb, WANT);
  __syncthreads();
  if (t >= 1 && t <= 4 && t != 3) { const float v = 10.f * t; emu_st_async(&slot[t - 1], &v, 4, &mb); }
  emu_mb_wait(&mb, 0);
  out[t] = slot[t % 4];
}
XB_EXPORT(probe)
`

// TestEmuMbarrier shows the emulator's mbarriers complete a phase when its
// bytes have arrived, whatever the order of arming and arrival, and report a
// wait that nothing can complete instead of hanging.
func TestEmuMbarrier(t *testing.T) {
	d := emutest.Open(t)
	out, err := gpu.RunProbe(d, "#define WANT 16\n"+mbarrierProbe, "probe", 32, 32)
	if err != nil || out[0] != 10 || out[1] != 20 || out[2] != 30 || out[3] != 40 || out[7] != 40 {
		t.Fatalf("16 bytes expected and stored: %v %v, want slots 10 20 30 40 read after the wait", out[:8], err)
	}
	if _, err := gpu.RunProbe(d, "#define WANT 20\n"+mbarrierProbe, "probe", 32, 32); err == nil {
		t.Fatal("20 bytes expected, 16 stored: the wait returned; it must never complete, and be reported")
	} else {
		t.Logf("a phase nothing completes is reported: %v", err)
	}
}
