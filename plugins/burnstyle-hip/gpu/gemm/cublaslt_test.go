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

// TestEmuCUBLASLt runs the cublaslt variant's call path on the emulator's
// fake cuBLASLt: descriptors for every layout with a batch (non-square, so
// a swapped m and n or a wrong leading dimension shows), the heuristic, the
// timed search and the product with the picked algorithm, against the CPU.
func TestEmuCUBLASLt(t *testing.T) {
	d := emutest.Open(t)
	t.Setenv("XBENCH_LIBCUBLASLT", emutest.Lib())
	r := rand.New(rand.NewPCG(31, 32))
	lt := gemm.Mode{Lt: true}
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
			got, err := gemm.ExportWith(context.Background(), d, s, a, b, lt)
			if err != nil {
				t.Fatalf("%s through cuBLASLt: %v", s, err)
			}
			want, err := cpu.GEMMDtype(dt, s.Batch, s.M, s.N, s.K, s.TransA, s.TransB, a, b)
			if err != nil {
				t.Fatal(err)
			}
			if e, nan := gemmRelL2(got, want); nan > 0 || !(e <= gemmTol[dt]) {
				t.Errorf("%s through cuBLASLt: rel L2 %.3g (tol %g), %d NaN", s, e, gemmTol[dt], nan)
			}
		}
	}
	tm, err := gemm.TimeWith(context.Background(), d, gemm.Spec{Batch: 1, M: 8, N: 4, K: 16, Dtype: "bfloat16"}, 1, 3, 1, lt)
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.SamplesMs) != 3 || !strings.Contains(tm.Algo, "algo id") || !strings.Contains(tm.Timing, "cublasLtMatmul") ||
		!strings.HasPrefix(tm.Library, "cublasLt ") {
		t.Errorf("timing %+v: want 3 samples, the picked algorithm and cublasLt named", tm)
	}
	t.Logf("%s; %s", tm.Algo, tm.Timing)
}
