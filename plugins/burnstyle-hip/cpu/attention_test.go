package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveAttention is the definition in float64, one element at a time, with
// explicit GQA and mask arithmetic so it shares no code with Attention.
func naiveAttention(s AttentionShape, q, k, v []float32) []float64 {
	S, KV, D := s.SeqLen, s.KVLen, s.HeadDim
	out := make([]float64, s.QLen())
	sc := make([]float64, KV)
	for b := 0; b < s.Batch; b++ {
		for h := 0; h < s.Heads; h++ {
			kh := h / (s.Heads / s.KVHeads)
			for i := 0; i < S; i++ {
				m := math.Inf(-1)
				for j := 0; j < KV; j++ {
					sc[j] = math.Inf(-1)
					if s.Causal && j > i+(KV-S) {
						continue
					}
					var acc float64
					for t := 0; t < D; t++ {
						acc += float64(q[((b*s.Heads+h)*S+i)*D+t]) * float64(k[((b*s.KVHeads+kh)*KV+j)*D+t])
					}
					sc[j] = acc / math.Sqrt(float64(D))
					m = math.Max(m, sc[j])
				}
				if math.IsInf(m, -1) {
					continue // no visible key: zeros
				}
				var l float64
				for j := range sc {
					sc[j] = math.Exp(sc[j] - m)
					l += sc[j]
				}
				for t := 0; t < D; t++ {
					var acc float64
					for j := 0; j < KV; j++ {
						acc += sc[j] * float64(v[((b*s.KVHeads+kh)*KV+j)*D+t])
					}
					out[((b*s.Heads+h)*S+i)*D+t] = acc / l
				}
			}
		}
	}
	return out
}

func uniform(r *rand.Rand, n int, lo, hi float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = lo + (hi-lo)*r.Float32()
	}
	return x
}

// attnRelL2 is ||got - want|| / ||want||.
func attnRelL2(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		d := float64(got[i]) - w
		num += d * d
		den += w * w
	}
	return math.Sqrt(num / den)
}

func TestAttentionAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		s     AttentionShape
		dtype string
		tol   float64
	}{
		{AttentionShape{1, 1, 1, 1, 1, 1, false}, "float32", 1e-6},
		{AttentionShape{2, 4, 2, 37, 53, 16, false}, "float32", 1e-6},
		{AttentionShape{2, 4, 2, 37, 37, 24, true}, "float32", 1e-6},
		{AttentionShape{1, 4, 1, 37, 53, 32, true}, "float32", 1e-6}, // kv longer: bottom-right offset 16
		{AttentionShape{1, 2, 2, 53, 37, 16, true}, "float32", 1e-6}, // the first 16 rows see no key
		{AttentionShape{2, 4, 2, 37, 53, 16, true}, "bfloat16", 1e-2},
		{AttentionShape{1, 3, 3, 19, 19, 32, false}, "float16", 2e-3},
	} {
		q := uniform(r, tc.s.QLen(), -2, 2)
		k, v := uniform(r, tc.s.KLen(), -2, 2), uniform(r, tc.s.KLen(), -1, 1)
		got, err := AttentionDtype(tc.dtype, tc.s, q, k, v)
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		if tc.dtype == "float32" {
			want = naiveAttention(tc.s, q, k, v)
		} else { // the same rounded inputs, unrounded float64 result
			round := map[string]func(float32) float32{"bfloat16": RoundBF16, "float16": RoundF16}[tc.dtype]
			rq, rk, rv := append([]float32{}, q...), append([]float32{}, k...), append([]float32{}, v...)
			for _, x := range [][]float32{rq, rk, rv} {
				for i := range x {
					x[i] = round(x[i])
				}
			}
			want = naiveAttention(tc.s, rq, rk, rv)
		}
		e := attnRelL2(got, want)
		t.Logf("%s %s: rel L2 %.3g", tc.s, tc.dtype, e)
		if !(e <= tc.tol) {
			t.Errorf("%s %s: rel L2 %.3g > %g", tc.s, tc.dtype, e, tc.tol)
		}
		if tc.s.Causal && tc.s.SeqLen > tc.s.KVLen {
			for i, x := range got[:(tc.s.SeqLen-tc.s.KVLen)*tc.s.HeadDim] {
				if x != 0 {
					t.Fatalf("%s: fully masked row element %d = %g, want 0", tc.s, i, x)
				}
			}
		}
	}
}

func TestAttentionErrors(t *testing.T) {
	s := AttentionShape{1, 4, 3, 8, 8, 16, false}
	if _, err := Attention(s, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "kv_heads 3 does not divide heads 4") {
		t.Errorf("bad grouping: %v", err)
	}
	s.KVHeads = 2
	if _, err := Attention(s, make([]float32, 3), nil, nil); err == nil || !strings.Contains(err.Error(), "have 3, 0, 0 elements") {
		t.Errorf("short q: %v", err)
	}
	if _, err := AttentionDtype("float8", s, nil, nil, nil); err == nil || !strings.Contains(err.Error(), `"float8"`) {
		t.Errorf("bad dtype: %v", err)
	}
}
