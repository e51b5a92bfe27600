package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveAttentionGrad is the backward's definition in float64, element by
// element from the full score matrix of one (batch, head), sharing no code
// with AttentionBackward: out, then dq, dk, dv (dk and dv summed over the
// heads of a group).
func naiveAttentionGrad(s AttentionShape, q, k, v, dout []float32) (out, dq, dk, dv []float64) {
	S, KV, D, g := s.SeqLen, s.KVLen, s.HeadDim, s.Heads/s.KVHeads
	out, dq = make([]float64, s.QLen()), make([]float64, s.QLen())
	dk, dv = make([]float64, s.KLen()), make([]float64, s.KLen())
	scale := 1 / math.Sqrt(float64(D))
	at := func(x []float32, i int) float64 { return float64(x[i]) }
	for b := 0; b < s.Batch; b++ {
		for h := 0; h < s.Heads; h++ {
			qo, ko := (b*s.Heads+h)*S*D, (b*s.KVHeads+h/g)*KV*D
			p := make([][]float64, S)
			for i := range p {
				p[i] = make([]float64, KV)
				m, any := math.Inf(-1), false
				for j := 0; j < KV; j++ {
					p[i][j] = math.Inf(-1)
					if s.Causal && j > i+KV-S {
						continue
					}
					var acc float64
					for t := 0; t < D; t++ {
						acc += at(q, qo+i*D+t) * at(k, ko+j*D+t)
					}
					p[i][j], any = acc*scale, true
					m = math.Max(m, p[i][j])
				}
				var l float64
				for j := range p[i] {
					if p[i][j] = 0; any && !(s.Causal && j > i+KV-S) {
						var acc float64
						for t := 0; t < D; t++ {
							acc += at(q, qo+i*D+t) * at(k, ko+j*D+t)
						}
						p[i][j] = math.Exp(acc*scale - m)
					}
					l += p[i][j]
				}
				for j := range p[i] {
					if l > 0 {
						p[i][j] /= l
					}
				}
				for t := 0; t < D; t++ {
					for j := 0; j < KV; j++ {
						out[qo+i*D+t] += p[i][j] * at(v, ko+j*D+t)
					}
				}
			}
			for i := 0; i < S; i++ {
				var di float64
				for t := 0; t < D; t++ {
					di += at(dout, qo+i*D+t) * out[qo+i*D+t]
				}
				for j := 0; j < KV; j++ {
					var dp float64
					for t := 0; t < D; t++ {
						dp += at(dout, qo+i*D+t) * at(v, ko+j*D+t)
					}
					ds := p[i][j] * (dp - di)
					for t := 0; t < D; t++ {
						dq[qo+i*D+t] += scale * ds * at(k, ko+j*D+t)
						dk[ko+j*D+t] += scale * ds * at(q, qo+i*D+t)
						dv[ko+j*D+t] += p[i][j] * at(dout, qo+i*D+t)
					}
				}
			}
		}
	}
	return out, dq, dk, dv
}

// TestAttentionGradAgainstNaive: odd sizes, causal and not, GQA and not,
// kv_len longer and shorter than seq_len (rows with no visible key), every
// dtype; the 16-bit cases compare with the float64 gradients of the same
// rounded inputs, so the error is the dtype's rounding of the results.
func TestAttentionGradAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		s     AttentionShape
		dtype string
		tol   float64
	}{
		{AttentionShape{1, 1, 1, 2, 3, 1, false}, "float32", 1e-6}, // head_dim 1 (one key would give dq = dk = 0)
		{AttentionShape{2, 4, 2, 37, 53, 16, false}, "float32", 2e-6},
		{AttentionShape{2, 4, 2, 37, 37, 24, true}, "float32", 2e-6},
		{AttentionShape{1, 4, 1, 37, 53, 32, true}, "float32", 2e-6}, // kv longer: bottom-right offset 16
		{AttentionShape{1, 2, 2, 53, 37, 16, true}, "float32", 2e-6}, // the first 16 rows see no key
		{AttentionShape{2, 4, 2, 37, 53, 16, true}, "bfloat16", 1e-2},
		{AttentionShape{1, 3, 3, 19, 19, 32, false}, "float16", 2e-3},
		{AttentionShape{1, 4, 2, 29, 23, 8, true}, "float16", 2e-3},
	} {
		round, err := Rounding(tc.dtype)
		if err != nil {
			t.Fatal(err)
		}
		rounded := func(x []float32) []float32 { return Rounded(round, x) }
		q := rounded(uniform(r, tc.s.QLen(), -2, 2))
		k, v := rounded(uniform(r, tc.s.KLen(), -2, 2)), rounded(uniform(r, tc.s.KLen(), -1, 1))
		dout := rounded(uniform(r, tc.s.QLen(), -1, 1))
		out, dq, dk, dv, err := AttentionGradDtype(tc.dtype, tc.s, q, k, v, dout)
		if err != nil {
			t.Fatal(err)
		}
		wo, wq, wk, wv := naiveAttentionGrad(tc.s, q, k, v, dout)
		for _, c := range []struct {
			name string
			got  []float32
			want []float64
		}{{"out", out, wo}, {"dq", dq, wq}, {"dk", dk, wk}, {"dv", dv, wv}} {
			e := attnRelL2(c.got, c.want)
			t.Logf("%s %s %s: rel L2 %.3g", tc.s, tc.dtype, c.name, e)
			if !(e <= tc.tol) {
				t.Errorf("%s %s %s: rel L2 %.3g > %g", tc.s, tc.dtype, c.name, e, tc.tol)
			}
		}
		if tc.s.Causal && tc.s.SeqLen > tc.s.KVLen {
			for i, x := range dq[:(tc.s.SeqLen-tc.s.KVLen)*tc.s.HeadDim] {
				if x != 0 {
					t.Fatalf("%s: dq of a row with no key, element %d = %g, want 0", tc.s, i, x)
				}
			}
		}
	}
}

func TestAttentionGradErrors(t *testing.T) {
	s := AttentionShape{1, 4, 2, 8, 8, 16, false}
	if _, _, _, err := AttentionBackward(s, make([]float32, 3), nil, nil, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "have 3, 0, 0, 0, 0, 0 elements") {
		t.Errorf("short q: %v", err)
	}
	if _, _, _, _, err := AttentionGradDtype("float8", s, nil, nil, nil, nil); err == nil || !strings.Contains(err.Error(), `"float8"`) {
		t.Errorf("bad dtype: %v", err)
	}
}
