package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveGEMM is the float64 triple loop of the workload definition.
func naiveGEMM(batch, m, n, k int, transA, transB bool, a, b []float32) []float64 {
	c := make([]float64, batch*m*n)
	for bi := 0; bi < batch; bi++ {
		A, B := a[bi*m*k:], b[bi*k*n:]
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for p := 0; p < k; p++ {
					x := A[i*k+p] // [m, k]
					if transA {
						x = A[p*m+i] // [k, m]
					}
					y := B[p*n+j] // [k, n]
					if transB {
						y = B[j*k+p] // [n, k]
					}
					s += float64(x) * float64(y)
				}
				c[bi*m*n+i*n+j] = s
			}
		}
	}
	return c
}

func relL2(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		d := float64(got[i]) - w
		num += d * d
		den += w * w
	}
	return math.Sqrt(num / den)
}

func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

var layouts = []struct {
	name   string
	ta, tb bool
}{{"nn", false, false}, {"nt", false, true}, {"tn", true, false}, {"tt", true, true}}

func TestGEMMLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := []struct{ batch, m, n, k int }{
		{1, 1, 1, 1}, {3, 17, 33, 65}, {2, 64, 64, 64}, {1, 70, 130, 300}, {4, 5, 3, 600}, {2, 33, 1, 7},
	}
	for _, s := range shapes {
		for _, l := range layouts {
			t.Run(fmt.Sprintf("%s/b%d_m%d_n%d_k%d", l.name, s.batch, s.m, s.n, s.k), func(t *testing.T) {
				a, b := randF32(r, s.batch*s.m*s.k), randF32(r, s.batch*s.k*s.n)
				a0, b0 := append([]float32(nil), a...), append([]float32(nil), b...)
				got := GEMM(s.batch, s.m, s.n, s.k, l.ta, l.tb, a, b)
				want := naiveGEMM(s.batch, s.m, s.n, s.k, l.ta, l.tb, a, b)
				if len(got) != len(want) {
					t.Fatalf("len %d, want %d", len(got), len(want))
				}
				if e := relL2(got, want); e > 1e-6 || math.IsNaN(e) {
					t.Fatalf("rel L2 %.3g > 1e-6", e)
				}
				for i := range a {
					if a[i] != a0[i] {
						t.Fatal("GEMM modified A")
					}
				}
				for i := range b {
					if b[i] != b0[i] {
						t.Fatal("GEMM modified B")
					}
				}
			})
		}
	}
}

// TestGEMMLayoutsDistinct makes sure the four layouts really read the
// operands differently (a layout bug that transposes both sides the same way
// would otherwise pass on square inputs).
func TestGEMMLayoutsDistinct(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randF32(r, 8*8), randF32(r, 8*8)
	seen := map[float32]string{}
	for _, l := range layouts {
		c := GEMM(1, 8, 8, 8, l.ta, l.tb, a, b)
		if prev, ok := seen[c[1]]; ok {
			t.Fatalf("layouts %s and %s give the same C[0,1]", prev, l.name)
		}
		seen[c[1]] = l.name
	}
}

func TestGEMMEmpty(t *testing.T) {
	if c := GEMM(2, 3, 4, 0, false, false, nil, nil); len(c) != 24 || c[5] != 0 {
		t.Fatalf("k=0: %v", c)
	}
	if c := GEMM(0, 3, 4, 5, true, true, nil, nil); len(c) != 0 {
		t.Fatalf("batch=0: %v", c)
	}
}

func TestGEMMDtype(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const batch, m, n, k = 2, 17, 33, 65
	a, b := randF32(r, batch*m*k), randF32(r, batch*k*n)
	for _, l := range layouts {
		for _, dt := range []string{"float32", "tf32", "bfloat16", "float16"} {
			got, err := GEMMDtype(dt, batch, m, n, k, l.ta, l.tb, a, b)
			if err != nil {
				t.Fatalf("%s %s: %v", dt, l.name, err)
			}
			round := func(x float32) float32 { return x }
			tol := 1e-6
			switch dt {
			case "bfloat16":
				round, tol = RoundBF16, 1e-5 // only the output rounding differs from the reference: 2^-9 per element, and that is checked below
			case "float16":
				round, tol = RoundF16, 1e-5
			}
			ra, rb := make([]float32, len(a)), make([]float32, len(b))
			for i := range a {
				ra[i] = round(a[i])
			}
			for i := range b {
				rb[i] = round(b[i])
			}
			want := naiveGEMM(batch, m, n, k, l.ta, l.tb, ra, rb)
			// got is rounded to the dtype: each element is the dtype's
			// rounding of (nearly) want, so compare the rounded reference.
			exact := 0
			for i, w := range want {
				if got[i] != round(got[i]) {
					t.Fatalf("%s %s: C[%d]=%g is not a %s value", dt, l.name, i, got[i], dt)
				}
				if got[i] == round(float32(w)) {
					exact++
				}
			}
			if dt == "bfloat16" || dt == "float16" {
				wr := make([]float64, len(want))
				for i, w := range want {
					wr[i] = float64(round(float32(w)))
				}
				if e := relL2(got, wr); e > tol {
					t.Errorf("%s %s: rel L2 to the rounded reference %.3g > %g", dt, l.name, e, tol)
				}
				if exact < len(want)*9/10 {
					t.Errorf("%s %s: only %d of %d elements equal the rounded reference", dt, l.name, exact, len(want))
				}
			} else if e := relL2(got, want); e > tol {
				t.Errorf("%s %s: rel L2 %.3g > %g", dt, l.name, e, tol)
			}
		}
	}
	if _, err := GEMMDtype("float8_e4m3", batch, m, n, k, false, false, a, b); err == nil ||
		err.Error() != "gemm: dtype float8_e4m3 is unsupported on cpu" {
		t.Errorf("float8_e4m3: err = %v", err)
	}
	if _, err := GEMMDtype("int8", batch, m, n, k, false, false, a, b); err == nil {
		t.Error("int8: no error")
	}
	if _, err := GEMMDtype("float32", batch, m, n, k, false, false, a[1:], b); err == nil {
		t.Error("short A: no error")
	}
}

func TestGEMMRoundingHelpers(t *testing.T) {
	cases := []struct {
		x        float32
		bf, half uint16
	}{
		{0, 0, 0},
		{1, 0x3f80, 0x3c00},
		{-2, 0xc000, 0xc000},
		{65504, 0x4780, 0x7bff},                            // largest half
		{65520, 0x4780, 0x7c00},                            // rounds to half infinity
		{float32(math.Inf(1)), 0x7f80, 0x7c00},             // infinity stays
		{math.Float32frombits(0x3f808000), 0x3f80, 0x3c04}, // bf16 tie to even (down)
		{math.Float32frombits(0x3f818000), 0x3f82, 0x3c0c}, // bf16 tie to even (up)
		{float32(1) + 1.0/2048, 0x3f80, 0x3c00},            // half tie to even (down)
		{float32(1) + 3.0/2048, 0x3f80, 0x3c02},            // half tie to even (up)
		{5.960464477539063e-08, 0x3380, 0x0001},            // 2^-24: smallest half subnormal
		{2.98023223876953125e-08, 0x3300, 0x0000},          // 2^-25: tie to even, to zero
		{4.470348358154297e-08, 0x3340, 0x0001},            // 1.5 * 2^-25 rounds up
		{6.097555160522461e-05, 0x3880, 0x03ff},            // largest half subnormal
	}
	for _, c := range cases {
		if got := BF16Bits(c.x); got != c.bf {
			t.Errorf("BF16Bits(%g) = %#04x, want %#04x", c.x, got, c.bf)
		}
		if got := F16Bits(c.x); got != c.half {
			t.Errorf("F16Bits(%g) = %#04x, want %#04x", c.x, got, c.half)
		}
	}
	// Every half value widens and rounds back to itself.
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN
		}
		if got := F16Bits(FromF16Bits(uint16(h))); got != uint16(h) {
			t.Fatalf("F16 round trip %#04x -> %g -> %#04x", h, FromF16Bits(uint16(h)), got)
		}
	}
	if nan := float32(math.NaN()); RoundBF16(nan) == RoundBF16(nan) || RoundF16(nan) == RoundF16(nan) {
		t.Error("NaN does not stay NaN")
	}
}

func BenchmarkGEMM512(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	const n = 512
	x, y := randF32(r, n*n), randF32(r, n*n)
	for _, l := range layouts {
		b.Run(l.name, func(b *testing.B) {
			b.SetBytes(0)
			for b.Loop() {
				GEMM(1, n, n, n, l.ta, l.tb, x, y)
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
