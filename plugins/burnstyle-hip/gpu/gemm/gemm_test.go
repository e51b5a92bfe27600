package gemm_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// gemmTol is the accepted relative L2 error against cpu.GEMMDtype (inputs
// rounded alike; float32 1e-5 would fail a TF32 product at these k).
var gemmTol = map[string]float64{"float32": 1e-5, "tf32": 5e-3, "bfloat16": 1e-2, "float16": 2e-3}

func gemmRelL2(got, want []float32) (float64, int) {
	var num, den float64
	nan := 0
	for i, w := range want {
		if math.IsNaN(float64(got[i])) {
			nan++
			continue
		}
		d := float64(got[i]) - float64(w)
		num += d * d
		den += float64(w) * float64(w)
	}
	return math.Sqrt(num / den), nan
}

// checkGEMM runs ExportGEMM on d for every layout of each shape and dtype
// and compares with the CPU.
func checkGEMM(t *testing.T, d *gpu.Device, dtypes []string, shapes [][4]int) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	for _, sh := range shapes {
		for _, layout := range []string{"nn", "nt", "tn", "tt"} {
			for _, dt := range dtypes {
				s := gemm.Spec{Batch: sh[0], M: sh[1], N: sh[2], K: sh[3],
					TransA: layout[0] == 't', TransB: layout[1] == 't', Dtype: dt}
				a, b := make([]float32, s.Batch*s.M*s.K), make([]float32, s.Batch*s.K*s.N)
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
				}
				got, err := gemm.Export(context.Background(), d, s, a, b)
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				cpuDt := dt
				if dt == "tf32" {
					cpuDt = "float32"
				}
				want, err := cpu.GEMMDtype(cpuDt, s.Batch, s.M, s.N, s.K, s.TransA, s.TransB, a, b)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s: %d elements, want %d", s, len(got), len(want))
				}
				e, nan := gemmRelL2(got, want)
				if nan > 0 || !(e < gemmTol[dt]) {
					t.Errorf("%s: rel L2 %.3g (tol %g), %d NaN", s, e, gemmTol[dt], nan)
				} else {
					t.Logf("%s: rel L2 %.3g", s, e)
				}
			}
		}
	}
}

// TestGEMMEmulator runs the cuBLAS path on the CPU emulator (emu_test.go):
// library binding, the worker thread, uploads, the operand swap of all four
// layouts, batches (one GemmEx per entry: the emulator has no strided
// batched call), bf16 conversion and the download. The emulator knows only
// CUBLAS_COMPUTE_32F with float32 and bf16, so tf32 and float16 are left to
// TestGPUGEMM.
func TestGEMMEmulator(t *testing.T) {
	d := emutest.Open(t)
	checkGEMM(t, d, []string{"float32", "bfloat16"}, [][4]int{{1, 17, 33, 65}, {3, 17, 33, 65}, {2, 1, 5, 3}})
	tm, err := gemm.Time(context.Background(), d, gemm.Spec{Batch: 2, M: 16, N: 24, K: 8, TransB: true, Dtype: "bfloat16"}, 1, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.SamplesMs) != 3 || tm.CompileMs <= 0 || tm.Library != "cublas 13.0.0" ||
		tm.PeakMemoryBytes != 2*(2*16*8+2*8*24)+2*16*24*2+32<<20 || tm.Device.Name != "xbemu CPU emulator" {
		t.Errorf("timing %+v", tm)
	}
	t.Logf("%+v", tm)
	// --cold-cache: the same samples, the flush buffer not in the peak, and
	// the timing note saying what was written outside the events.
	cold, err := gemm.TimeCold(context.Background(), d, gemm.Spec{Batch: 1, M: 16, N: 24, K: 8, Dtype: "float32"}, 0, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(cold.SamplesMs) != 2 || cold.PeakMemoryBytes >= gpu.FlushBytes || !strings.Contains(cold.Timing, "256 MiB memset") {
		t.Errorf("cold timing %+v", cold)
	}
	// --cuda-graph: the captured call replayed, and the note says so
	graph, err := gemm.TimeWith(context.Background(), d, gemm.Spec{Batch: 2, M: 16, N: 24, K: 8, Dtype: "bfloat16"}, 1, 2, 7, gemm.Mode{Cold: true, Graph: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(graph.SamplesMs) != 2 || !strings.Contains(graph.Timing, "replay") || !strings.Contains(graph.Timing, "memset") {
		t.Errorf("graph timing %+v", graph)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := gemm.Time(ctx, d, gemm.Spec{Batch: 1, M: 4, N: 4, K: 4, Dtype: "float32"}, 0, 2, 1); err == nil {
		t.Error("cancelled context: no error")
	}
	if _, err := gemm.Export(context.Background(), d, gemm.Spec{Batch: 1, M: 4, N: 4, K: 4, Dtype: "float32"}, make([]float32, 15), make([]float32, 16)); err == nil {
		t.Error("short A: no error")
	}
	if err := gemm.Supports(d, gemm.Spec{Batch: 1, M: 4, N: 4, K: 4, Dtype: "float8_e4m3"}); err == nil {
		t.Error("float8_e4m3: no error")
	}
}

// TestGPUGEMM needs a real GPU: like TestGPU it runs only with
// XBENCH_REQUIRE_GPU=1 (device_run.sh sets it; its -test.run pattern
// 'TestGPU' matches this name) and then fails, not skips, without one.
func TestGPUGEMM(t *testing.T) {
	if os.Getenv("XBENCH_REQUIRE_GPU") != "1" {
		t.Skip("needs a GPU: set XBENCH_REQUIRE_GPU=1 on a machine with libcuda (or HIP) and its run-time compiler")
	}
	d, err := gpu.Open("auto")
	if err != nil {
		t.Fatalf("XBENCH_REQUIRE_GPU=1 but no GPU opened: %v", err)
	}
	defer d.Close()
	spec := gemm.Spec{Batch: 1, M: 64, N: 64, K: 64, Dtype: "float32"}
	if d.Info().Kind == "rocm" {
		if err := gemm.Supports(d, spec); err == nil || !strings.Contains(err.Error(), "gemm on rocm is not implemented") {
			t.Fatalf("rocm: GEMMSupports = %v", err)
		}
		return
	}
	if err := gemm.Supports(d, spec); err != nil {
		t.Fatalf("GEMMSupports: %v", err)
	}
	checkGEMM(t, d, []string{"float32", "tf32", "bfloat16", "float16"},
		[][4]int{{1, 17, 33, 65}, {3, 17, 33, 65}, {2, 64, 48, 1024}, {1, 1, 7, 5}})
	for _, dt := range []string{"float32", "tf32", "bfloat16", "float16"} {
		for _, s := range []gemm.Spec{{Batch: 1, M: 4096, N: 4096, K: 4096, Dtype: dt},
			{Batch: 8, M: 1024, N: 1024, K: 1024, TransB: true, Dtype: dt}} {
			tm, err := gemm.Time(context.Background(), d, s, 3, 10, 1)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			min := math.Inf(1)
			for _, ms := range tm.SamplesMs {
				min = math.Min(min, ms)
			}
			tf := 2 * float64(s.Batch) * float64(s.M) * float64(s.N) * float64(s.K) / (min * 1e-3) / 1e12
			t.Logf("%s: first %.2f ms, best %.3f ms = %.1f TFLOP/s, %d bytes, %s", s, tm.CompileMs, min, tf, tm.PeakMemoryBytes, tm.Library)
			if len(tm.SamplesMs) != 10 || !(min > 0) {
				t.Errorf("%s: samples %v", s, tm.SamplesMs)
			}
		}
	}
}
