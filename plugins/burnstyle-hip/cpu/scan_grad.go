package cpu

// The scan's backward (log: marginals by the beta recursion; max: the best
// path's indicator by backtrace) and the entropy forward. See scan.go.

import "math"

// marginals: with v[s, c] = ⊕_d (seg(s, d, c) + beta[s+d, c]) and
// beta[t, c] = ⊕_c2 (trans[c, c2] + v[t, c2]), beta[L] = 0, a segment of c
// over [s, s+d) has marginal exp(u[s, c] + seg + beta[s+d, c] - logZ) summed
// over the label before it; the transition c' -> c at s has
// exp(alpha[s, c'] + trans[c', c] + v[s, c] - logZ).
func (r scanRow[F]) marginals(dCum, dTrans, dDur []F) F {
	alpha, u := r.alphas()
	logZ := r.final(alpha)
	C := r.C
	beta, v := make([]F, (r.L+1)*C), make([]F, (r.L+1)*C)
	buf := make([]F, max(r.K, C))
	for t := r.L - 1; t >= 0; t-- {
		for c := 0; c < C; c++ {
			n := min(r.K, r.L-t)
			for d := 1; d <= n; d++ {
				buf[d-1] = r.seg(t, d, c) + beta[(t+d)*C+c]
			}
			v[t*C+c] = r.reduce(buf[:n])
		}
		for c := 0; c < C; c++ {
			for c2 := 0; c2 < C; c2++ {
				buf[c2] = r.trans[c*C+c2] + v[t*C+c2]
			}
			beta[t*C+c] = r.reduce(buf[:C])
		}
	}
	for s := 0; s < r.L; s++ {
		for c := 0; c < C; c++ {
			for d := 1; d <= min(r.K, r.L-s); d++ {
				m := exp(u[s*C+c] + r.seg(s, d, c) + beta[(s+d)*C+c] - logZ)
				dCum[(s+d)*C+c] += m
				dCum[s*C+c] -= m
				dDur[(d-1)*C+c] += m
			}
			for cp := 0; cp < C; cp++ {
				dTrans[cp*C+c] += exp(alpha[s*C+cp] + r.trans[cp*C+c] + v[s*C+c] - logZ)
			}
		}
	}
	return logZ
}

// backtrace follows the first maximum (smallest d, then smallest c') back
// from the best final label, adding 1 where log adds a marginal.
func (r scanRow[F]) backtrace(dCum, dTrans, dDur []F) F {
	alpha, u := r.alphas()
	C := r.C
	c := 0
	for x := 1; x < C; x++ {
		if alpha[r.L*C+x] > alpha[r.L*C+c] {
			c = x
		}
	}
	best := alpha[r.L*C+c]
	for t := r.L; t > 0; {
		bd := 1
		for d := 2; d <= min(r.K, t); d++ {
			if u[(t-d)*C+c]+r.seg(t-d, d, c) > u[(t-bd)*C+c]+r.seg(t-bd, bd, c) {
				bd = d
			}
		}
		s := t - bd
		dCum[t*C+c]++
		dCum[s*C+c]--
		dDur[(bd-1)*C+c]++
		bc := 0
		for cp := 1; cp < C; cp++ {
			if alpha[s*C+cp]+r.trans[cp*C+c] > alpha[s*C+bc]+r.trans[bc*C+c] {
				bc = cp
			}
		}
		dTrans[bc*C+c]++
		t, c = s, bc
	}
	return best
}

// entropy is logZ - E_p[score], E carried beside alpha and u (the
// expectation semiring): each logsumexp becomes a softmax-weighted mean of
// (the source's E + the added score).
func (r scanRow[F]) entropy() F {
	C := r.C
	alpha, u := make([]F, (r.L+1)*C), make([]F, (r.L+1)*C)
	ea, eu := make([]F, (r.L+1)*C), make([]F, (r.L+1)*C)
	terms, vals := make([]F, max(r.K, C)), make([]F, max(r.K, C))
	for t := 0; t <= r.L; t++ {
		for c := 0; t > 0 && c < C; c++ {
			n := min(r.K, t)
			for d := 1; d <= n; d++ {
				sg := r.seg(t-d, d, c)
				terms[d-1], vals[d-1] = u[(t-d)*C+c]+sg, eu[(t-d)*C+c]+sg
			}
			alpha[t*C+c], ea[t*C+c] = r.expectation(terms[:n], vals[:n])
		}
		for c := 0; c < C; c++ {
			for cp := 0; cp < C; cp++ {
				terms[cp], vals[cp] = alpha[t*C+cp]+r.trans[cp*C+c], ea[t*C+cp]+r.trans[cp*C+c]
			}
			u[t*C+c], eu[t*C+c] = r.expectation(terms[:C], vals[:C])
		}
	}
	logZ, e := r.expectation(alpha[r.L*C:(r.L+1)*C], ea[r.L*C:(r.L+1)*C])
	return logZ - e
}

// expectation is logsumexp(terms) and Σ softmax(terms)_i · vals[i].
func (r scanRow[F]) expectation(terms, vals []F) (F, F) {
	m := terms[0]
	for _, x := range terms[1:] {
		m = max(m, x)
	}
	var z, e F
	for i, x := range terms {
		w := exp(x - m)
		z += w
		e += w * vals[i]
	}
	return m + F(math.Log(float64(z))), e / z
}
