package gemm

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// Two batches of the logical product [2x3] @ [3x2], by hand:
//
//	batch 0: [1 2 3; 4 5 6] @ [7 8; 9 10; 11 12] = [58 64; 139 154]
//	batch 1: [1 0 -1; 0 1 0] @ [1 2; 3 4; 5 6]   = [-4 -4; 3 4]
//
// stored in each layout; every layout must give the same C.
func TestReferenceLayouts(t *testing.T) {
	aN := []float32{1, 2, 3, 4, 5, 6 /**/, 1, 0, -1, 0, 1, 0}   // [2, m=2, k=3]
	aT := []float32{1, 4, 2, 5, 3, 6 /**/, 1, 0, 0, 1, -1, 0}   // [2, k=3, m=2]
	bN := []float32{7, 8, 9, 10, 11, 12 /**/, 1, 2, 3, 4, 5, 6} // [2, k=3, n=2]
	bT := []float32{7, 9, 11, 8, 10, 12 /**/, 1, 3, 5, 2, 4, 6} // [2, n=2, k=3]
	want := []float64{58, 64, 139, 154 /**/, -4, -4, 3, 4}
	stored := map[byte][2][]float32{'n': {aN, bN}, 't': {aT, bT}}
	for _, layout := range layouts {
		cfg := resolve(t, map[string]string{"m": "2", "n": "2", "k": "3", "batch": "2", "layout": layout})
		aShape, bShape, _ := Shapes(cfg)
		fx := workload.Fixtures{Inputs: map[string]tensorfile.Tensor{
			"a": tensorfile.F32(aShape, stored[layout[0]][0]),
			"b": tensorfile.F32(bShape, stored[layout[1]][1]),
		}}
		c, err := Workload{}.Reference(cfg, fx)
		if err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		got, _ := c.Float64s()
		if c.DType != tensorfile.DTypeF64 || !slices.Equal(c.Shape, []int{2, 2, 2}) || !slices.Equal(got, want) {
			t.Errorf("%s: C = %s %v %v, want F64 [2 2 2] %v", layout, c.DType, c.Shape, got, want)
		}
	}
	// Inputs of the wrong shape are refused, not misread.
	cfg := resolve(t, map[string]string{"m": "2", "n": "2", "k": "3", "batch": "2", "layout": "nt"})
	fx := workload.Fixtures{Inputs: map[string]tensorfile.Tensor{
		"a": tensorfile.F32([]int{2, 2, 3}, aN), "b": tensorfile.F32([]int{2, 3, 2}, bN)}}
	if _, err := (Workload{}).Reference(cfg, fx); err == nil {
		t.Error("Reference accepted b stored [2 3 2] for layout nt")
	}
}

// logical reads the [batch, rows, cols] matrix a fixture stores, undoing
// its layout.
func logical(t *testing.T, x tensorfile.Tensor, transposed bool) []float32 {
	t.Helper()
	v, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if !transposed {
		return v
	}
	b, r, c := x.Shape[0], x.Shape[1], x.Shape[2] // stored [batch, cols, rows] of the logical matrix
	out := make([]float32, len(v))
	for bi := 0; bi < b; bi++ {
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				out[bi*r*c+j*r+i] = v[bi*r*c+i*c+j]
			}
		}
	}
	return out
}

func TestFixtures(t *testing.T) {
	w := Workload{}
	set := map[string]string{"m": "5", "n": "7", "k": "3", "batch": "2"}
	base := resolve(t, set)
	fx0, _ := w.Fixtures(base, 1)
	again, _ := w.Fixtures(base, 1)
	other, _ := w.Fixtures(base, 2)
	if string(fx0.Inputs["a"].Data) != string(again.Inputs["a"].Data) || string(fx0.Inputs["b"].Data) != string(again.Inputs["b"].Data) {
		t.Error("Fixtures not deterministic in the seed")
	}
	if string(fx0.Inputs["a"].Data) == string(other.Inputs["a"].Data) || string(fx0.Inputs["a"].Data[:28]) == string(fx0.Inputs["b"].Data[:28]) {
		t.Error("seeds 1 and 2, or a and b, give the same values")
	}
	if len(fx0.Weights) != 0 || len(fx0.Inputs) != 2 || w.Output(base) != "c" || workload.ReferenceBackendOf(w) != "" {
		t.Errorf("fixtures %d weights %d inputs, output %q, reference backend %q", len(fx0.Weights), len(fx0.Inputs), w.Output(base), workload.ReferenceBackendOf(w))
	}
	aRef, bRef := logical(t, fx0.Inputs["a"], false), logical(t, fx0.Inputs["b"], false)

	for _, dt := range DtypeNames() {
		d, _ := lookupDtype(dt)
		for _, layout := range layouts {
			cfg := base.With("dtype", dt).With("layout", layout)
			fx, err := w.Fixtures(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			aShape, bShape, _ := Shapes(cfg)
			a, b := fx.Inputs["a"], fx.Inputs["b"]
			if a.DType != tensorfile.DTypeF32 || !slices.Equal(a.Shape, aShape) || !slices.Equal(b.Shape, bShape) {
				t.Fatalf("%s %s: a %s %v, b %v; want F32 %v and %v", dt, layout, a.DType, a.Shape, b.Shape, aShape, bShape)
			}
			la, lb := logical(t, a, layout[0] == 't'), logical(t, b, layout[1] == 't')
			for i, x := range la {
				// Every layout stores the same logical matrix, rounded to the dtype.
				want := aRef[i]
				if d.round != nil {
					want = d.round(want)
				}
				if x != want || x < -1 || x > 1 {
					t.Fatalf("%s %s: a[%d] = %g, want %g in [-1, 1]", dt, layout, i, x, want)
				}
			}
			if d.round != nil && d.round(lb[0]) != lb[0] {
				t.Errorf("%s: b[0] = %g is not exact in the dtype", dt, lb[0])
			}
			if dt == "float32" && !slices.Equal(lb, bRef) {
				t.Errorf("%s: logical B differs from layout nn", layout)
			}
		}
	}
}

func TestTolerance(t *testing.T) {
	w := Workload{}
	tol := func(dt string, k int) float64 {
		return w.Tolerance(resolve(t, map[string]string{"dtype": dt, "k": strconv.Itoa(k)}))
	}
	tests := []struct {
		dtype string
		k     int
		want  float64
	}{
		{"float32", 1, 1e-5},     // output rounding does not shrink with k: never below base
		{"float32", 256, 1e-5},   // the base point
		{"float32", 1024, 2e-5},  // sqrt(1024/256) = 2
		{"bfloat16", 4096, 4e-2}, // sqrt(16) = 4
		{"bfloat16", 6400, 5e-2}, // sqrt(25) = 5, the cap
		{"float16", 1 << 20, 1e-2},
		{"tf32", 16, 5e-3},
		{"float8_e4m3", 65536, 3e-1},
	}
	for _, tc := range tests {
		if got := tol(tc.dtype, tc.k); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Tolerance(%s, k=%d) = %g, want %g", tc.dtype, tc.k, got, tc.want)
		}
	}
	prev := 0.0
	for k := 1; k <= 1<<20; k *= 2 {
		got := tol("bfloat16", k)
		if got < prev {
			t.Errorf("Tolerance shrinks from %g to %g at k=%d", prev, got, k)
		}
		prev = got
	}
}

// A correct backend of each dtype, emulated: inputs as the dtype holds them
// (tf32 truncated to 10 mantissa bits, the worst of the roundings hardware
// uses), products summed one by one in float32 (the least accurate order),
// the sum rounded to the output dtype. It must pass with room to spare
// (half the tolerance), and the same backend reading B as if stored
// transposed, a typical layout bug, must fail.
func TestTolerancePassesCorrectAndFailsWrong(t *testing.T) {
	w := Workload{}
	for _, dt := range DtypeNames() {
		for _, mnk := range [][3]string{{"16", "16", "1"}, {"16", "16", "64"}, {"8", "8", "4096"}, {"2", "2", "65536"}} {
			cfg := resolve(t, map[string]string{"m": mnk[0], "n": mnk[1], "k": mnk[2], "dtype": dt})
			fx, _ := w.Fixtures(cfg, 7)
			ref, err := w.Reference(cfg, fx)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := ref.Float64s()
			tol := w.Tolerance(cfg)
			if e := relL2(emulate(cfg, fx), want); e > tol/2 {
				t.Errorf("%s k=%s: correct backend's error %.3g is above half the tolerance %.3g", dt, mnk[2], e, tol)
			}
			if cfg.Int("k") == 1 {
				continue // a [1, n] B reads the same either way
			}
			if e := relL2(emulate(cfg.With("layout", "nt"), fx), want); !(e > tol) {
				t.Errorf("%s k=%s: B read as transposed has error %.3g, within the tolerance %.3g", dt, mnk[2], e, tol)
			}
		}
	}
}

// emulate multiplies fixtures stored in layout nn the way cfg's dtype does
// on hardware, reading B as cfg's layout says.
func emulate(cfg result.Config, fx workload.Fixtures) []float64 {
	b, m, n, k := dims(cfg)
	a, _ := fx.Inputs["a"].Float32s()
	bv, _ := fx.Inputs["b"].Float32s()
	in := func(x float32) float32 { return x }
	if cfg.Dtype() == "tf32" {
		in = func(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ 0x1fff) }
	}
	out := func(x float32) float32 { return x }
	switch cfg.Dtype() {
	case "bfloat16", "float8_e4m3":
		out = RoundBF16
	case "float16":
		out = RoundF16
	}
	bAt := func(bi, p, j int) float32 { return bv[bi*k*n+p*n+j] }
	if cfg.Get("layout")[1] == 't' {
		bAt = func(bi, p, j int) float32 { return bv[bi*k*n+j*k+p] }
	}
	c := make([]float64, b*m*n)
	for bi := 0; bi < b; bi++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float32
				for p := 0; p < k; p++ {
					s += float32(in(a[bi*m*k+i*k+p]) * in(bAt(bi, p, j)))
				}
				c[bi*m*n+i*n+j] = float64(out(s))
			}
		}
	}
	return c
}

func relL2(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}
