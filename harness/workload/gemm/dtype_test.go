package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/xbench/xbench/harness/tensorfile"
)

func TestRoundKnownValues(t *testing.T) {
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	tests := []struct {
		name    string
		round   func(float32) float32
		in, out float32
	}{
		// bfloat16: spacing 2^-7 just above 1.
		{"bf16 exact", RoundBF16, 1 + p(-7), 1 + p(-7)},
		{"bf16 tie to even down", RoundBF16, 1 + p(-8), 1},
		{"bf16 tie to even up", RoundBF16, 1 + 3*p(-8), 1 + p(-6)},
		{"bf16 above the tie", RoundBF16, 1 + p(-8) + p(-20), 1 + p(-7)},
		{"bf16 negative", RoundBF16, -(1 + 3*p(-8)), -(1 + p(-6))},
		{"bf16 carry into the exponent", RoundBF16, 2 - p(-9), 2},
		{"bf16 subnormal step 2^-133", RoundBF16, p(-130) + p(-134) + p(-149), p(-130) + p(-133)},
		{"bf16 subnormal tie to even", RoundBF16, p(-130) + p(-134), p(-130)},
		{"bf16 overflow", RoundBF16, math.MaxFloat32, inf},
		// float16: spacing 2^-10 above 1, subnormal step 2^-24, max 65504.
		{"f16 tie to even down", RoundF16, 1 + p(-11), 1},
		{"f16 tie to even up", RoundF16, 1 + 3*p(-11), 1 + p(-9)},
		{"f16 largest", RoundF16, 65519, 65504},
		{"f16 overflow at the tie", RoundF16, 65520, inf},
		{"f16 subnormal tie to zero", RoundF16, p(-25), 0},
		{"f16 subnormal tie to even", RoundF16, 3 * p(-25), p(-23)},
		// e4m3: spacing 2^-3 above 1, subnormal step 2^-9, max 448, no infinity.
		{"e4m3 tie to even down", RoundE4M3, 1 + p(-4), 1},
		{"e4m3 tie to even up", RoundE4M3, 1 + 3*p(-4), 1.25},
		{"e4m3 plain", RoundE4M3, 0.3, 0.3125},
		{"e4m3 largest", RoundE4M3, 464, 448},
		{"e4m3 overflow", RoundE4M3, 465, nan},
		{"e4m3 subnormal tie to zero", RoundE4M3, p(-10), 0},
		{"e4m3 subnormal tie to even", RoundE4M3, 3 * p(-10), p(-8)},
		{"nan stays nan", RoundBF16, nan, nan},
	}
	for _, tc := range tests {
		got := tc.round(tc.in)
		if got != tc.out && !(got != got && tc.out != tc.out) {
			t.Errorf("%s: round(%g) = %g, want %g", tc.name, tc.in, got, tc.out)
		}
	}
}

// The helpers must agree with tensorfile's bit-level BF16 and F16 encoders,
// an independent implementation, on many values across the range.
func TestRoundMatchesTensorfile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	v := []float32{0, -0, 1, -1, 65504, 65519.99, 65520, 1e-8, 6e-8, 3e-5}
	for range 20000 {
		v = append(v, math.Float32frombits(r.Uint32()&^(0xff<<23)|uint32(100+r.IntN(56))<<23))
	}
	bf, _ := tensorfile.BF16([]int{len(v)}, v).Float32s()
	f16, _ := tensorfile.F16([]int{len(v)}, v).Float32s()
	for i, x := range v {
		if got := RoundBF16(x); got != bf[i] {
			t.Fatalf("RoundBF16(%g) = %g, tensorfile says %g", x, got, bf[i])
		}
		if got := RoundF16(x); got != f16[i] {
			t.Fatalf("RoundF16(%g) = %g, tensorfile says %g", x, got, f16[i])
		}
	}
}
