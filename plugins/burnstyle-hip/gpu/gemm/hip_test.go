package gemm_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// TestEmuHIPBLAS runs gemm's rocm call path on the emulator's HIP face with
// its hipBLASLt and rocBLAS stand-ins (emu/xbemu_rocblas.cpp, not AMD's
// libraries: they take hipblaslt.h's and rocblas.h's values and refuse
// cuBLAS's): for hipBLASLt the handle, descriptors for every layout with a
// batch (non-square, so a swapped m and n or a wrong leading dimension
// shows), the heuristic, the timed search and the product with the picked
// algorithm; for rocBLAS its strided batched call. Each is checked against
// the CPU, then timed, and what is recorded must name the library and,
// for hipBLASLt, the algorithm.
func TestEmuHIPBLAS(t *testing.T) {
	d := emutest.OpenHIP(t, 64)
	r := rand.New(rand.NewPCG(41, 42))
	ctx := context.Background()
	worst := map[string]float64{} // library and dtype: the largest rel L2 over the layouts, logged
	for _, lib := range []struct {
		name string
		mode gemm.Mode
	}{{"hipBLASLt", gemm.Mode{}}, {"rocBLAS", gemm.Mode{RocBLAS: true}}} {
		for _, layout := range []string{"nn", "nt", "tn", "tt"} {
			for _, dt := range []string{"float32", "bfloat16"} {
				s := gemm.Spec{Batch: 2, M: 5, N: 7, K: 3, TransA: layout[0] == 't', TransB: layout[1] == 't', Dtype: dt}
				a, b := make([]float32, s.Batch*s.M*s.K), make([]float32, s.Batch*s.K*s.N)
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
				}
				got, err := gemm.ExportWith(ctx, d, s, a, b, lib.mode)
				if err != nil {
					t.Fatalf("%s through %s: %v", s, lib.name, err)
				}
				want, err := cpu.GEMMDtype(dt, s.Batch, s.M, s.N, s.K, s.TransA, s.TransB, a, b)
				if err != nil {
					t.Fatal(err)
				}
				e, nan := gemmRelL2(got, want)
				if nan > 0 || !(e <= gemmTol[dt]) {
					t.Errorf("%s through %s: rel L2 %.3g (tol %g), %d NaN", s, lib.name, e, gemmTol[dt], nan)
				}
				worst[lib.name+" "+dt] = max(worst[lib.name+" "+dt], e)
			}
		}
	}
	t.Logf("largest rel L2 against the CPU over the four layouts: %v", worst)
	spec := gemm.Spec{Batch: 1, M: 8, N: 4, K: 16, Dtype: "bfloat16"}
	lt, err := gemm.TimeWith(ctx, d, spec, 1, 3, 1, gemm.Mode{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.SamplesMs) != 3 || !strings.Contains(lt.Algo, "algo bytes") || !strings.Contains(lt.Timing, "hipblasLtMatmul") ||
		!strings.HasPrefix(lt.Library, "hipblaslt ") || lt.Device.Kind != "rocm" {
		t.Errorf("hipBLASLt timing %+v: want 3 samples on rocm, the picked algorithm and hipblaslt named", lt)
	}
	t.Logf("hipBLASLt: %s; %s", lt.Algo, lt.Timing)
	// through a HIP graph: rocBLAS's handle must follow the capture's stream
	roc, err := gemm.TimeWith(ctx, d, spec, 1, 3, 1, gemm.Mode{RocBLAS: true, Graph: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(roc.SamplesMs) != 3 || roc.Algo != "" || !strings.Contains(roc.Timing, "rocblas_gemm_strided_batched_ex") ||
		!strings.Contains(roc.Timing, "HIP graph") || !strings.HasPrefix(roc.Library, "rocblas ") {
		t.Errorf("rocBLAS timing %+v: want 3 samples of a HIP graph's replays, rocblas named", roc)
	}
	t.Logf("rocBLAS: %s", roc.Timing)
	for _, tc := range []struct {
		mode  gemm.Mode
		dtype string
		want  string
	}{
		{gemm.Mode{Lt: true}, "float32", "needs cuda"},
		{gemm.Mode{RocBLAS: true}, "tf32", "through rocBLAS: not supported"},
	} {
		_, err := gemm.ExportWith(ctx, d, gemm.Spec{Batch: 1, M: 2, N: 2, K: 2, Dtype: tc.dtype}, make([]float32, 4), make([]float32, 4), tc.mode)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %s on rocm: %v, want an answer containing %q", tc.mode, tc.dtype, err, tc.want)
		}
	}
}
