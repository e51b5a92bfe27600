package cpu

// Scaled dot-product attention backward (docs/workloads/attention.md,
// "Phases" and "Reference") in pure Go: dq, dk, dv from dout given the
// forward's out and per-row log-sum-exp (AttentionLSE), as FlashAttention-2
// does: p is recomputed from the scores and the saved log-sum-exp instead of
// being stored, then
//
//	dv[j] += p[i,j] dout[i]            dp[i,j] = dout[i] . v[j]
//	ds[i,j] = p[i,j] (dp[i,j] - D[i])  D[i]    = dout[i] . out[i]
//	dq[i]  = scale sum_j ds[i,j] k[j]  dk[j]  += scale ds[i,j] q[i]
//
// Work is split by (batch, kv head): one goroutine owns a kv head's dk and
// dv and walks every query row of the g heads that share it, so the GQA sum
// needs no lock and the result is bitwise reproducible. Products are float32;
// dq, dk and dv accumulate in float64 (cheap: one row or one head's worth).

import (
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/numeric"
)

// AttentionBackward returns dq, dk, dv for the forward (q, k, v) -> out
// whose row log-sum-exps are lse, and the output gradient dout.
func AttentionBackward(s AttentionShape, q, k, v, out, dout, lse []float32) (dq, dk, dv []float32, err error) {
	if err := s.Check(); err != nil {
		return nil, nil, nil, err
	}
	qn, kn, rows := s.QLen(), s.KLen(), s.Batch*s.Heads*s.SeqLen
	if len(q) != qn || len(k) != kn || len(v) != kn || len(out) != qn || len(dout) != qn || len(lse) != rows {
		return nil, nil, nil, fmt.Errorf("attention backward %s: q, k, v, out, dout, lse have %d, %d, %d, %d, %d, %d elements; want %d, %d, %d, %d, %d, %d",
			s, len(q), len(k), len(v), len(out), len(dout), len(lse), qn, kn, kn, qn, qn, rows)
	}
	S, KV, D, g := s.SeqLen, s.KVLen, s.HeadDim, s.Heads/s.KVHeads
	dq, dk, dv = make([]float32, qn), make([]float32, kn), make([]float32, kn)
	scale := float32(1 / math.Sqrt(float64(D)))
	numeric.ParallelFor(s.Batch*s.KVHeads, func(_, t int) {
		b, kh := t/s.KVHeads, t%s.KVHeads
		kvOff := (b*s.KVHeads + kh) * KV * D
		kb, vb := k[kvOff:kvOff+KV*D], v[kvOff:kvOff+KV*D]
		dk64, dv64 := make([]float64, KV*D), make([]float64, KV*D)
		p, ds, dqi := make([]float32, KV), make([]float32, KV), make([]float64, D)
		for h := kh * g; h < (kh+1)*g; h++ {
			bh := b*s.Heads + h
			for i := 0; i < S; i++ {
				row := (bh*S + i) * D
				n := s.Visible(i)
				qi, oi, gi := q[row:row+D], out[row:row+D], dout[row:row+D]
				var di float32
				for t, x := range gi {
					di += x * oi[t]
				}
				l := lse[bh*S+i]
				for j := 0; j < n; j++ {
					kj, vj := kb[j*D:j*D+D], vb[j*D:j*D+D]
					var sc, dp float32
					for t, x := range qi {
						sc += x * kj[t]
						dp += gi[t] * vj[t]
					}
					p[j] = float32(math.Exp(float64(sc*scale - l)))
					ds[j] = p[j] * (dp - di)
				}
				clear(dqi)
				for j := 0; j < n; j++ {
					kj, pj, dsj := kb[j*D:j*D+D], float64(p[j]), float64(ds[j]*scale)
					dkj, dvj := dk64[j*D:j*D+D], dv64[j*D:j*D+D]
					for t := range D {
						dqi[t] += dsj * float64(kj[t])
						dkj[t] += dsj * float64(qi[t])
						dvj[t] += pj * float64(gi[t])
					}
				}
				for t, x := range dqi {
					dq[row+t] = float32(x)
				}
			}
		}
		for e := range dk64 {
			dk[kvOff+e], dv[kvOff+e] = float32(dk64[e]), float32(dv64[e])
		}
	})
	return dq, dk, dv, nil
}

// AttentionGradDtype is one forward and backward at a workload dtype (the
// export of the backward phases): q, k, v and dout rounded to bfloat16 or
// float16 (float32 as is), the forward in float32 with out rounded to the
// dtype before the backward reads it (a GPU stores it so), and out, dq, dk,
// dv rounded to the dtype. The inputs are not modified.
func AttentionGradDtype(dtype string, s AttentionShape, q, k, v, dout []float32) (out, dq, dk, dv []float32, err error) {
	round, err := Rounding(dtype)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("attention backward %s: %w", s, err)
	}
	rounded := func(x []float32) []float32 { return Rounded(round, x) }
	q, k, v, dout = rounded(q), rounded(k), rounded(v), rounded(dout)
	out, lse, err := AttentionLSE(s, q, k, v)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	out = rounded(out)
	if dq, dk, dv, err = AttentionBackward(s, q, k, v, out, dout, lse); err != nil {
		return nil, nil, nil, nil, err
	}
	return out, rounded(dq), rounded(dk), rounded(dv), nil
}
