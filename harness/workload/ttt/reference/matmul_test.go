package reference

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func randSlice[T Float](r *rand.Rand, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(r.NormFloat64())
	}
	return v
}

func TestMatMulNT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tests := []struct{ m, k, n int }{
		{1, 1, 1}, {3, 5, 7}, {2, 4, 4}, {33, 300, 65}, {64, 257, 130}, {5, 600, 3},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%dx%dx%d", tc.m, tc.k, tc.n), func(t *testing.T) {
			a, bt := randSlice[float64](r, tc.m*tc.k), randSlice[float64](r, tc.n*tc.k)
			c := make([]float64, tc.m*tc.n)
			for i := range c {
				c[i] = 99 // must be overwritten, not accumulated into
			}
			MatMulNT(c, a, bt, tc.m, tc.k, tc.n)
			for i := 0; i < tc.m; i++ {
				for j := 0; j < tc.n; j++ {
					var want float64
					for p := 0; p < tc.k; p++ {
						want += a[i*tc.k+p] * bt[j*tc.k+p]
					}
					if d := c[i*tc.n+j] - want; d > 1e-9 || d < -1e-9 {
						t.Fatalf("c[%d,%d] = %g, want %g", i, j, c[i*tc.n+j], want)
					}
				}
			}
		})
	}
}

func BenchmarkMatMulNT(b *testing.B) {
	for _, sz := range []struct{ m, k, n int }{{256, 768, 768}, {256, 768, 2048}} {
		b.Run(fmt.Sprintf("f32/%dx%dx%d", sz.m, sz.k, sz.n), func(b *testing.B) { benchMatMul[float32](b, sz.m, sz.k, sz.n) })
		b.Run(fmt.Sprintf("f64/%dx%dx%d", sz.m, sz.k, sz.n), func(b *testing.B) { benchMatMul[float64](b, sz.m, sz.k, sz.n) })
	}
}

func benchMatMul[T Float](b *testing.B, m, k, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	a, bt, c := randSlice[T](r, m*k), randSlice[T](r, n*k), make([]T, m*n)
	b.ResetTimer()
	for b.Loop() {
		MatMulNT(c, a, bt, m, k, n)
	}
	b.ReportMetric(float64(2*m*k*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func TestGemmNN(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ m, k, n int }{{1, 1, 1}, {16, 64, 256}, {16, 256, 64}, {5, 7, 9}, {16, 16, 64}} {
		for _, acc := range []bool{false, true} {
			a, b := randSlice[float64](r, tc.m*tc.k), randSlice[float64](r, tc.k*tc.n)
			c := randSlice[float64](r, tc.m*tc.n)
			c0 := append([]float64(nil), c...)
			gemmNN(c, a, b, tc.m, tc.k, tc.n, acc)
			for i := 0; i < tc.m; i++ {
				for j := 0; j < tc.n; j++ {
					var want float64
					if acc {
						want = c0[i*tc.n+j]
					}
					for p := 0; p < tc.k; p++ {
						want += a[i*tc.k+p] * b[p*tc.n+j]
					}
					if d := c[i*tc.n+j] - want; d > 1e-9 || d < -1e-9 {
						t.Fatalf("%v acc=%v: c[%d,%d] = %g, want %g", tc, acc, i, j, c[i*tc.n+j], want)
					}
				}
			}
		}
	}
}
