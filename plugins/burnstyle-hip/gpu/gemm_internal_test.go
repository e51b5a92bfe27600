package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
)

func TestCublasArgsTable(t *testing.T) {
	// m=3 n=5 k=7, batch 2: cuBLAS sees m'=n=5, n'=m=3, k=7, first operand B.
	base := GEMMSpec{Batch: 2, M: 3, N: 5, K: 7, Dtype: "float32"}
	tests := []struct {
		layout            string
		opFirst, opSecond int32
		ldFirst, ldSecond int32
	}{
		{"nn", CublasOpN, CublasOpN, 5, 7}, // B [k,n]: ld n; A [m,k]: ld k
		{"nt", CublasOpT, CublasOpN, 7, 7}, // B [n,k]: ld k
		{"tn", CublasOpN, CublasOpT, 5, 3}, // A [k,m]: ld m
		{"tt", CublasOpT, CublasOpT, 7, 3},
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
	if (x.opFirst == CublasOpN && lf < m) || (x.opFirst == CublasOpT && lf < k) ||
		(x.opSecond == CublasOpN && ls < k) || (x.opSecond == CublasOpT && ls < n) || ldc < m {
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
					if x.opFirst == CublasOpT {
						f = F[l+i*lf] // op T: element (l, i) of a stored k x m
					} else {
						f = F[i+l*lf] // op N: element (i, l) of an m x k matrix
					}
					if x.opSecond == CublasOpT {
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
			s := GEMMSpec{Batch: sh.batch, M: sh.m, N: sh.n, K: sh.k, TransA: layout[0] == 't', TransB: layout[1] == 't', Dtype: "float32"}
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
	if err != nil || f32.compute != CublasCompute32F || f32.math != CublasPedanticMath || f32.in != CudaR32F || f32.out != CudaR32F {
		t.Errorf("float32 must be IEEE float32 (compute 32F, pedantic math): %+v %v", f32, err)
	}
	tf, err := gemmTypeOf("tf32")
	if err != nil || tf.compute != CublasCompute32FFastTF32 || tf.in != CudaR32F || tf.inBytes != 4 {
		t.Errorf("tf32: %+v %v", tf, err)
	}
	bf, err := gemmTypeOf("bfloat16")
	if err != nil || bf.compute != CublasCompute32F || bf.in != CudaR16BF || bf.out != CudaR16BF || bf.inBytes != 2 || bf.outBytes != 2 {
		t.Errorf("bfloat16: %+v %v", bf, err)
	}
	h, err := gemmTypeOf("float16")
	if err != nil || h.compute != CublasCompute32F || h.in != CudaR16F || h.out != CudaR16F {
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
	for _, s := range []GEMMSpec{{0, 1, 1, 1, false, false, "float32"}, {1, 1, -1, 1, false, false, "float32"}, {1, 1, 1, 1 << 31, false, false, "float32"}} {
		if s.check() == nil {
			t.Errorf("%+v: no shape error", s)
		}
	}
	s := GEMMSpec{Batch: 2, M: 3, N: 5, K: 7, Dtype: "bfloat16"}
	if n, err := s.DeviceBytes(); err != nil || n != 2*(2*3*7+2*7*5)+(2*2*3*5+3)/4*4+CublasWorkspace {
		t.Errorf("DeviceBytes = %d, %v", n, err)
	}
}

func TestGEMMEncode(t *testing.T) {
	v := []float32{0, 1, -2.5, 3.14159, 1e-3, 65504, float32(math.Inf(-1))}
	for _, dt := range []int32{CudaR32F, CudaR16BF, CudaR16F} {
		got := Decode(Encode(v, dt), dt)
		for i, x := range v {
			want := x
			switch dt {
			case CudaR16BF:
				want = cpu.RoundBF16(x)
			case CudaR16F:
				want = cpu.RoundF16(x)
			}
			if got[i] != want {
				t.Errorf("type %d: %g -> %g, want %g", dt, x, got[i], want)
			}
		}
	}
	for _, dt := range []int32{CudaR32F, CudaR16BF, CudaR16F} {
		var b [4]byte
		w := NaNWord(dt)
		b[0], b[1], b[2], b[3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
		for _, x := range Decode(b[:], dt) {
			if !math.IsNaN(float64(x)) {
				t.Errorf("type %d: poison word %#x decodes to %g", dt, w, x)
			}
		}
	}
}

func TestGEMMRandomInputs(t *testing.T) {
	n := 2*gemmChunk + 17
	a := RandomInputs(n, 42, 1)
	old := runtime.GOMAXPROCS(1)
	b := RandomInputs(n, 42, 1)
	runtime.GOMAXPROCS(old)
	c := RandomInputs(n, 42, 2)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("inputs depend on GOMAXPROCS at %d", i)
		}
		if a[i] < -1 || a[i] >= 1 {
			t.Fatalf("a[%d] = %g outside [-1, 1)", i, a[i])
		}
		if a[i] == c[i] {
			same++
		}
	}
	if same > n/1000 {
		t.Errorf("A and B streams agree in %d of %d places", same, n)
	}
}
