package scan

import "math"

// marginals is the log semiring's backward: out = logZ, and the gradients
// of logZ, which are the segment marginals. With the completion
//
//	v[s, c]     = ⊕_{d=1..min(K,L-s)} (seg(s, d, c) + beta[s+d, c])   (a segment of c starts at s)
//	beta[t, c]  = ⊕_c2 (trans[c, c2] + v[t, c2]),  beta[L, c] = 0      (a segment of c ends at t)
//
// the marginal of a segment of label c over [s, s+d), summed over the label
// before it, is exp(u[s, c] + seg(s, d, c) + beta[s+d, c] - logZ); it adds to
// cum[s+d, c] and dur[d-1, c] and subtracts from cum[s, c]. The marginal of
// the transition c' -> c at s is exp(alpha[s, c'] + trans[c', c] + v[s, c] - logZ).
func (r row) marginals(dCum, dTrans, dDur []float64) float64 {
	alpha, u := r.alphas()
	logZ := r.final(alpha)
	C := r.C
	beta, v := make([]float64, (r.L+1)*C), make([]float64, (r.L+1)*C)
	for t := r.L; t >= 0; t-- {
		if t < r.L {
			for c := 0; c < C; c++ {
				x := math.Inf(-1)
				for d := 1; d <= min(r.K, r.L-t); d++ {
					x = logAdd(x, r.seg(t, d, c)+beta[(t+d)*C+c])
				}
				v[t*C+c] = x
			}
			for c := 0; c < C; c++ {
				x := math.Inf(-1)
				for c2 := 0; c2 < C; c2++ {
					x = logAdd(x, r.trans[c*C+c2]+v[t*C+c2])
				}
				beta[t*C+c] = x
			}
		}
	}
	for s := 0; s < r.L; s++ {
		for c := 0; c < C; c++ {
			for d := 1; d <= min(r.K, r.L-s); d++ {
				m := math.Exp(u[s*C+c] + r.seg(s, d, c) + beta[(s+d)*C+c] - logZ)
				dCum[(s+d)*C+c] += m
				dCum[s*C+c] -= m
				dDur[(d-1)*C+c] += m
			}
			for cp := 0; cp < C; cp++ {
				dTrans[cp*C+c] += math.Exp(alpha[s*C+cp] + r.trans[cp*C+c] + v[s*C+c] - logZ)
			}
		}
	}
	return logZ
}

// backtrace is the max semiring's backward: out = the Viterbi score, and
// its gradient, the best path's indicator: each segment on the path adds 1
// where the log semiring adds its marginal. Ties go to the first maximum
// (smallest d, then smallest c'); random inputs have none.
func (r row) backtrace(dCum, dTrans, dDur []float64) float64 {
	alpha, u := r.alphas()
	C := r.C
	best, c := math.Inf(-1), 0
	for x := 0; x < C; x++ {
		if a := alpha[r.L*C+x]; a > best {
			best, c = a, x
		}
	}
	for t := r.L; t > 0; {
		bd, bv := 0, math.Inf(-1)
		for d := 1; d <= min(r.K, t); d++ {
			if x := u[(t-d)*C+c] + r.seg(t-d, d, c); x > bv {
				bd, bv = d, x
			}
		}
		s := t - bd
		dCum[t*C+c]++
		dCum[s*C+c]--
		dDur[(bd-1)*C+c]++
		bc, bu := 0, math.Inf(-1)
		for cp := 0; cp < C; cp++ {
			if x := alpha[s*C+cp] + r.trans[cp*C+c]; x > bu {
				bc, bu = cp, x
			}
		}
		dTrans[bc*C+c]++
		t, c = s, bc
	}
	return best
}

// entropy is H = logZ - E_p[score], with E carried beside alpha in the
// expectation semiring: each ⊕ of the log recursion becomes a softmax-
// weighted mean of (E of the source + the added score).
func (r row) entropy() float64 {
	C := r.C
	alpha, u := make([]float64, (r.L+1)*C), make([]float64, (r.L+1)*C)
	ea, eu := make([]float64, (r.L+1)*C), make([]float64, (r.L+1)*C)
	terms := make([]float64, max(r.K, C))
	vals := make([]float64, max(r.K, C))
	for t := 0; t <= r.L; t++ {
		if t > 0 {
			for c := 0; c < C; c++ {
				n := min(r.K, t)
				for d := 1; d <= n; d++ {
					sg := r.seg(t-d, d, c)
					terms[d-1] = u[(t-d)*C+c] + sg
					vals[d-1] = eu[(t-d)*C+c] + sg
				}
				alpha[t*C+c], ea[t*C+c] = expectation(terms[:n], vals[:n])
			}
		}
		for c := 0; c < C; c++ {
			for cp := 0; cp < C; cp++ {
				terms[cp] = alpha[t*C+cp] + r.trans[cp*C+c]
				vals[cp] = ea[t*C+cp] + r.trans[cp*C+c]
			}
			u[t*C+c], eu[t*C+c] = expectation(terms[:C], vals[:C])
		}
	}
	logZ, e := expectation(alpha[r.L*C:(r.L+1)*C], ea[r.L*C:(r.L+1)*C])
	return logZ - e
}

// expectation returns logsumexp(terms) and Σ softmax(terms)_i · vals[i].
func expectation(terms, vals []float64) (float64, float64) {
	m := math.Inf(-1)
	for _, x := range terms {
		m = math.Max(m, x)
	}
	var z, e float64
	for i, x := range terms {
		w := math.Exp(x - m)
		z += w
		e += w * vals[i]
	}
	return m + math.Log(z), e / z
}
