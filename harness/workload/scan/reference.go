package scan

import (
	"math"

	"github.com/xbench/xbench/harness/workload"
)

// problem is one reference computation in float64: the inputs flat in
// row-major order (cum [batch][T+1][C], trans [C][C], dur [K][C]).
type problem struct {
	Shape
	semiring        string
	cum, trans, dur []float64
	lengths         []int64
}

// grads are the reference outputs; the gradients are nil for forward.
type grads struct{ out, dCum, dTrans, dDur []float64 }

// solve runs every row, rows in parallel. Each row writes its own out and
// dCum rows and its own partial dTrans/dDur, summed afterwards in row order,
// so the result does not depend on scheduling.
func (p problem) solve(backward bool) grads {
	g := grads{out: make([]float64, p.Batch)}
	var partTrans, partDur [][]float64
	if backward {
		g.dCum = make([]float64, len(p.cum))
		partTrans, partDur = make([][]float64, p.Batch), make([][]float64, p.Batch)
	}
	workload.Parallel(p.Batch, func(b int) {
		r := p.row(b)
		switch {
		case p.semiring == SemiringEntropy:
			g.out[b] = r.entropy()
		case !backward:
			g.out[b] = r.forward()
		default:
			partTrans[b], partDur[b] = make([]float64, p.C*p.C), make([]float64, p.K*p.C)
			dCum := g.dCum[b*(p.T+1)*p.C : (b+1)*(p.T+1)*p.C]
			if p.semiring == SemiringMax {
				g.out[b] = r.backtrace(dCum, partTrans[b], partDur[b])
			} else {
				g.out[b] = r.marginals(dCum, partTrans[b], partDur[b])
			}
		}
	})
	if backward {
		g.dTrans, g.dDur = make([]float64, p.C*p.C), make([]float64, p.K*p.C)
		for b := 0; b < p.Batch; b++ {
			addTo(g.dTrans, partTrans[b])
			addTo(g.dDur, partDur[b])
		}
	}
	return g
}

func addTo(dst, src []float64) {
	for i, x := range src {
		dst[i] += x
	}
}

// row is one sequence. The recursion is the spec's, factored once:
//
//	u[s, c]     = ⊕_c' (alpha[s, c'] + trans[c', c])
//	alpha[t, c] = ⊕_{d=1..min(K,t)} (u[t-d, c] + seg(t-d, d, c))
//	seg(s, d, c) = cum[s+d, c] - cum[s, c] + dur[d-1, c]
//
// which is the spec's double ⊕ over (d, c') because + distributes over
// both logsumexp and max. The reference stays a loop a reader can check
// against the spec; it is O(L·(K·C + C²)).
type row struct {
	K, C     int
	L        int
	cum      []float64 // [L+1][C] of this row (positions past L unused)
	trans    []float64
	dur      []float64
	semiring string
}

func (p problem) row(b int) row {
	base := b * (p.T + 1) * p.C
	return row{K: p.K, C: p.C, L: int(p.lengths[b]), cum: p.cum[base : base+(p.T+1)*p.C],
		trans: p.trans, dur: p.dur, semiring: p.semiring}
}

func (r row) seg(s, d, c int) float64 {
	return r.cum[(s+d)*r.C+c] - r.cum[s*r.C+c] + r.dur[(d-1)*r.C+c]
}

// plus is the semiring's ⊕ of two values.
func (r row) plus(a, b float64) float64 {
	if r.semiring == SemiringMax {
		return math.Max(a, b)
	}
	return logAdd(a, b)
}

func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// alphas returns alpha [L+1][C] and u [L+1][C] (u[L] unused).
func (r row) alphas() (alpha, u []float64) {
	alpha, u = make([]float64, (r.L+1)*r.C), make([]float64, (r.L+1)*r.C)
	for t := 0; t <= r.L; t++ {
		if t > 0 {
			for c := 0; c < r.C; c++ {
				a := math.Inf(-1)
				for d := 1; d <= min(r.K, t); d++ {
					a = r.plus(a, u[(t-d)*r.C+c]+r.seg(t-d, d, c))
				}
				alpha[t*r.C+c] = a
			}
		}
		for c := 0; c < r.C; c++ {
			v := math.Inf(-1)
			for cp := 0; cp < r.C; cp++ {
				v = r.plus(v, alpha[t*r.C+cp]+r.trans[cp*r.C+c])
			}
			u[t*r.C+c] = v
		}
	}
	return alpha, u
}

// forward is ⊕_c alpha[L, c].
func (r row) forward() float64 {
	alpha, _ := r.alphas()
	return r.final(alpha)
}

func (r row) final(alpha []float64) float64 {
	z := math.Inf(-1)
	for c := 0; c < r.C; c++ {
		z = r.plus(z, alpha[r.L*r.C+c])
	}
	return z
}
