package numeric

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

func randSlice(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

// naiveNN is c[m,n] = a[m,k] @ b[k,n] by the definition.
func naiveNN(a, b []float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				c[i*n+j] += a[i*k+p] * b[p*n+j]
			}
		}
	}
	return c
}

func assertClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %g, want %g", what, i, got[i], want[i])
		}
	}
}

var shapes = []struct{ m, k, n int }{
	{1, 1, 1}, {3, 5, 7}, {2, 4, 4}, {16, 16, 64}, {33, 300, 65}, {64, 257, 130}, {5, 600, 3},
}

func TestMatMulNTAndGemmNTMatchNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", tc.m, tc.k, tc.n), func(t *testing.T) {
			a, b := randSlice(r, tc.m*tc.k), randSlice(r, tc.k*tc.n)
			want := naiveNN(a, b, tc.m, tc.k, tc.n)
			bt := Transpose(b, tc.k, tc.n)
			for name, mul := range map[string]func(c, a, bt []float64, m, k, n int){"MatMulNT": MatMulNT[float64], "GemmNT": GemmNT[float64]} {
				c := make([]float64, tc.m*tc.n)
				for i := range c {
					c[i] = 99 // must be overwritten, not accumulated into
				}
				mul(c, a, bt, tc.m, tc.k, tc.n)
				assertClose(t, name, c, want)
			}
		})
	}
}

func TestMatMulNTRejectsShortSlices(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MatMulNT accepted a 2x2 output for a 3x3 product")
		}
	}()
	MatMulNT(make([]float64, 4), make([]float64, 9), make([]float64, 9), 3, 3, 3)
}

func TestGemmNNMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range shapes {
		for _, acc := range []bool{false, true} {
			a, b, c := randSlice(r, tc.m*tc.k), randSlice(r, tc.k*tc.n), randSlice(r, tc.m*tc.n)
			want := naiveNN(a, b, tc.m, tc.k, tc.n)
			if acc {
				for i := range want {
					want[i] += c[i]
				}
			}
			GemmNN(c, a, b, tc.m, tc.k, tc.n, acc)
			assertClose(t, fmt.Sprintf("%v accumulate=%v", tc, acc), c, want)
		}
	}
}

func TestVectorHelpers(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  func() []float64
		want []float64
	}{
		{"Dot", func() []float64 { return []float64{Dot([]float64{1, 2, 3}, []float64{4, 5, 6})} }, []float64{32}},
		{"Axpy", func() []float64 { y := []float64{1, 1}; Axpy(y, 2, []float64{3, -1}); return y }, []float64{7, -1}},
		{"Transpose", func() []float64 { return Transpose([]float64{1, 2, 3, 4, 5, 6}, 2, 3) }, []float64{1, 4, 2, 5, 3, 6}},
	} {
		assertClose(t, tc.name, tc.got(), tc.want)
	}
}

func TestParallelForVisitsEachItemOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		seen := make([]int, n)
		var mu sync.Mutex
		workers := map[int]bool{}
		ParallelFor(n, func(w, i int) {
			seen[i]++ // item i is this call's own output
			mu.Lock()
			workers[w] = true
			mu.Unlock()
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: item %d ran %d times", n, i, c)
			}
		}
		for w := range workers {
			if w < 0 || w >= NumWorkers() {
				t.Fatalf("n=%d: worker %d outside [0, %d)", n, w, NumWorkers())
			}
		}
	}
}

func BenchmarkMatMulNT(b *testing.B) {
	for _, sz := range []struct{ m, k, n int }{{256, 768, 768}, {256, 768, 2048}} {
		b.Run(fmt.Sprintf("f32/%dx%dx%d", sz.m, sz.k, sz.n), func(b *testing.B) { benchMatMul[float32](b, sz.m, sz.k, sz.n) })
		b.Run(fmt.Sprintf("f64/%dx%dx%d", sz.m, sz.k, sz.n), func(b *testing.B) { benchMatMul[float64](b, sz.m, sz.k, sz.n) })
	}
}

func benchMatMul[T Float](b *testing.B, m, k, n int) {
	a, bt, c := make([]T, m*k), make([]T, n*k), make([]T, m*n)
	for i := range a {
		a[i] = T(i%7) * 0.25
	}
	for i := range bt {
		bt[i] = T(i%5) * 0.5
	}
	for b.Loop() {
		MatMulNT(c, a, bt, m, k, n)
	}
	b.ReportMetric(float64(2*m*k*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
