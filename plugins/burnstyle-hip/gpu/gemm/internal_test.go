package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

func TestCublasArgsTable(t *testing.T) {
	// m=3 n=5 k=7, batch 2: cuBLAS sees m'=n=5, n'=m=3, k=7, first operand B.
	base := Spec{Batch: 2, M: 3, N: 5, K: 7, Dtype: "float32"}
	tests := []struct {
		layout            string
		opFirst, opSecond int32
		ldFirst, ldSecond int32
	}{
		{"nn", gpu.CublasOpN, gpu.CublasOpN, 5, 7}, // B [k,n]: ld n; A [m,k]: ld k
		{"nt", gpu.CublasOpT, gpu.CublasOpN, 7, 7}, // B [n,k]: ld k
		{"tn", gpu.CublasOpN, gpu.CublasOpT, 5, 3}, // A [k,m]: ld m
		{"tt", gpu.CublasOpT, gpu.CublasOpT, 7, 3},
	}
	for _, tc := range tests {
		s := base
		s.TransA, s.TransB = tc.layout[0] == 't', tc.layout[1] == 't'
		got := cublasArgs(s)
		want := gemmArgs{opFirst: tc.opFirst, opSecond: tc.opSecond, m: 5, n: 3, k: 7,
			ldFirst: tc.ldFirst, ldSecond: tc.ldSecond, ldc: 5,
			strideFirst: 35, strideSecond: 21, strideC: 15, batch: 2}
		if got != want {
			t.Errorf("%s: cublasArgs = %+v, want %+v", tc.layout, got, want)
		}
	}
}

// simulateCublas runs the column-major strided-batched GEMM cuBLAS is asked
// for, in float64, checking each leading dimension is one cuBLAS accepts.
// first is cuBLAS's A (our B), second its B (our A).
func simulateCublas(t *testing.T, x gemmArgs, first, second []float32) []float32 {
	t.Helper()
	m, n, k := int(x.m), int(x.n), int(x.k)
	lf, ls, ldc := int(x.ldFirst), int(x.ldSecond), int(x.ldc)
	// cuBLAS: lda >= m for op N (A is m x k), >= k for op T (stored k x m);
	// ldb >= k for op N (B is k x n), >= n for op T; ldc >= m.
	if (x.opFirst == gpu.CublasOpN && lf < m) || (x.opFirst == gpu.CublasOpT && lf < k) ||
		(x.opSecond == gpu.CublasOpN && ls < k) || (x.opSecond == gpu.CublasOpT && ls < n) || ldc < m {
		t.Fatalf("leading dimensions cuBLAS would reject: %+v", x)
	}
	c := make([]float32, int(x.batch)*int(x.strideC))
	for b := 0; b < int(x.batch); b++ {
		F, S := first[b*int(x.strideFirst):], second[b*int(x.strideSecond):]
		C := c[b*int(x.strideC):]
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				var s float64
				for l := 0; l < k; l++ {
					var f, g float32
					if x.opFirst == gpu.CublasOpT {
						f = F[l+i*lf] // op T: element (l, i) of a stored k x m
					} else {
						f = F[i+l*lf] // op N: element (i, l) of an m x k matrix
					}
					if x.opSecond == gpu.CublasOpT {
						g = S[j+l*ls] // element (j, l) of a stored n x k
					} else {
						g = S[l+j*ls] // element (l, j) of a k x n matrix
					}
					s += float64(f) * float64(g)
				}
				C[i+j*ldc] = float32(s)
			}
		}
	}
	return c
}

// TestCublasArgsProduct checks the operand swap end to end: the column-major
// call cublasArgs describes, run on row-major data, gives the row-major
// product of cpu.GEMM, for all four layouts.
func TestCublasArgsProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, sh := range []struct{ batch, m, n, k int }{{3, 17, 33, 65}, {2, 1, 9, 4}, {1, 8, 1, 3}, {2, 6, 6, 6}} {
		for _, layout := range []string{"nn", "nt", "tn", "tt"} {
			s := Spec{Batch: sh.batch, M: sh.m, N: sh.n, K: sh.k, TransA: layout[0] == 't', TransB: layout[1] == 't', Dtype: "float32"}
			t.Run(fmt.Sprintf("%s_%d_%d_%d_%d", layout, sh.batch, sh.m, sh.n, sh.k), func(t *testing.T) {
				a, b := make([]float32, s.Batch*s.M*s.K), make([]float32, s.Batch*s.K*s.N)
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
				}
				got := simulateCublas(t, cublasArgs(s), b, a)
				want := cpu.GEMM(s.Batch, s.M, s.N, s.K, s.TransA, s.TransB, a, b)
				var num, den float64
				for i := range want {
					d := float64(got[i] - want[i])
					num, den = num+d*d, den+float64(want[i])*float64(want[i])
				}
				if e := math.Sqrt(num / den); !(e < 1e-6) {
					t.Fatalf("rel L2 %.3g between the simulated cuBLAS call and cpu.GEMM", e)
				}
			})
		}
	}
}

func TestGEMMTypes(t *testing.T) {
	f32, err := gemmTypeOf("float32")
	if err != nil || f32.compute != gpu.CublasCompute32F || f32.math != gpu.CublasPedanticMath || f32.in != gpu.CudaR32F || f32.out != gpu.CudaR32F {
		t.Errorf("float32 must be IEEE float32 (compute 32F, pedantic math): %+v %v", f32, err)
	}
	tf, err := gemmTypeOf("tf32")
	if err != nil || tf.compute != gpu.CublasCompute32FFastTF32 || tf.in != gpu.CudaR32F || tf.inBytes != 4 {
		t.Errorf("tf32: %+v %v", tf, err)
	}
	bf, err := gemmTypeOf("bfloat16")
	if err != nil || bf.compute != gpu.CublasCompute32F || bf.in != gpu.CudaR16BF || bf.out != gpu.CudaR16BF || bf.inBytes != 2 || bf.outBytes != 2 {
		t.Errorf("bfloat16: %+v %v", bf, err)
	}
	h, err := gemmTypeOf("float16")
	if err != nil || h.compute != gpu.CublasCompute32F || h.in != gpu.CudaR16F || h.out != gpu.CudaR16F {
		t.Errorf("float16: %+v %v", h, err)
	}
	// float32 accumulation forbids split-K partial sums reduced in 16 bits
	for _, g := range []gemmType{bf, h} {
		if g.math&16 == 0 {
			t.Errorf("%+v: math mode lets cuBLAS reduce in the 16-bit type (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION unset)", g)
		}
	}
	if _, err := gemmTypeOf("float8_e4m3"); err == nil {
		t.Error("float8_e4m3: no error")
	}
	if _, err := gemmTypeOf("int8"); err == nil {
		t.Error("int8: no error")
	}
	for _, s := range []Spec{{0, 1, 1, 1, false, false, "float32"}, {1, 1, -1, 1, false, false, "float32"}, {1, 1, 1, 1 << 31, false, false, "float32"}} {
		if s.check() == nil {
			t.Errorf("%+v: no shape error", s)
		}
	}
	s := Spec{Batch: 2, M: 3, N: 5, K: 7, Dtype: "bfloat16"}
	if n, err := s.DeviceBytes(); err != nil || n != 2*(2*3*7+2*7*5)+(2*2*3*5+3)/4*4+gpu.CublasWorkspace {
		t.Errorf("DeviceBytes = %d, %v", n, err)
	}
}
