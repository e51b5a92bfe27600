package cpu

// The scan workload (docs/workloads/scan.md) in pure Go: the semi-Markov
// CRF scan under the log, max and entropy semirings, and the gradients of
// log and max, in the configuration's dtype (float32 arithmetic for
// float32: exp and log round through float64 math and back).
//
// Factored as every backend here factors it:
//
//	u[s, c]     = ⊕_c' (alpha[s, c'] + trans[c', c])
//	alpha[t, c] = ⊕_{d=1..min(K,t)} (u[t-d, c] + cum[t, c] - cum[t-d, c] + dur[d-1, c])
//
// O(K·C + C²) a position; rows of the batch in parallel, each writing only
// its own outputs and its own partial transition/duration gradients, which
// are summed in row order afterwards (deterministic).

import (
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/numeric"
)

// ScanShape is one scan configuration.
type ScanShape struct {
	T, K, C, Batch int
	Semiring       string // log, max, entropy
}

// Check refuses what the workload refuses, for a caller outside the harness.
func (s ScanShape) Check() error {
	if s.T < 1 || s.K < 1 || s.C < 1 || s.Batch < 1 || s.K > s.T {
		return fmt.Errorf("scan shape %+v: need T, K, C, batch >= 1 and K <= T", s)
	}
	switch s.Semiring {
	case "log", "max", "entropy":
		return nil
	}
	return fmt.Errorf("scan semiring %q: want log, max or entropy", s.Semiring)
}

// ScanResult is out [batch] and, when asked, the gradients of Σ out:
// DCum [batch, T+1, C], DTrans [C, C], DDur [K, C].
type ScanResult[F float32 | float64] struct {
	Out, DCum, DTrans, DDur []F
}

// Scan runs every row; grads asks for the gradients (log and max only).
// cum is [batch, T+1, C], trans [C, C], dur [K, C], lengths [batch] in 1..T.
func Scan[F float32 | float64](s ScanShape, cum, trans, dur []F, lengths []int64, grads bool) (ScanResult[F], error) {
	if err := s.Check(); err != nil {
		return ScanResult[F]{}, err
	}
	if len(cum) != s.Batch*(s.T+1)*s.C || len(trans) != s.C*s.C || len(dur) != s.K*s.C || len(lengths) != s.Batch {
		return ScanResult[F]{}, fmt.Errorf("scan %+v: inputs have %d, %d, %d, %d elements", s, len(cum), len(trans), len(dur), len(lengths))
	}
	if grads && s.Semiring == "entropy" {
		return ScanResult[F]{}, fmt.Errorf("scan: entropy has no backward")
	}
	for b, l := range lengths {
		if l < 1 || l > int64(s.T) {
			return ScanResult[F]{}, fmt.Errorf("scan: lengths[%d] = %d is outside 1..%d", b, l, s.T)
		}
	}
	r := ScanResult[F]{Out: make([]F, s.Batch)}
	var pt, pd [][]F
	if grads {
		r.DCum = make([]F, len(cum))
		pt, pd = make([][]F, s.Batch), make([][]F, s.Batch)
	}
	stride := (s.T + 1) * s.C
	numeric.ParallelFor(s.Batch, func(_, b int) {
		w := scanRow[F]{K: s.K, C: s.C, L: int(lengths[b]), cum: cum[b*stride : (b+1)*stride], trans: trans, dur: dur, max: s.Semiring == "max"}
		switch {
		case s.Semiring == "entropy":
			r.Out[b] = w.entropy()
		case !grads:
			alpha, _ := w.alphas()
			r.Out[b] = w.final(alpha)
		default:
			pt[b], pd[b] = make([]F, s.C*s.C), make([]F, s.K*s.C)
			if w.max {
				r.Out[b] = w.backtrace(r.DCum[b*stride:(b+1)*stride], pt[b], pd[b])
			} else {
				r.Out[b] = w.marginals(r.DCum[b*stride:(b+1)*stride], pt[b], pd[b])
			}
		}
	})
	if grads {
		r.DTrans, r.DDur = make([]F, s.C*s.C), make([]F, s.K*s.C)
		for b := 0; b < s.Batch; b++ {
			for i, x := range pt[b] {
				r.DTrans[i] += x
			}
			for i, x := range pd[b] {
				r.DDur[i] += x
			}
		}
	}
	return r, nil
}

type scanRow[F float32 | float64] struct {
	K, C, L         int
	cum, trans, dur []F
	max             bool
}

func exp[F float32 | float64](x F) F { return F(math.Exp(float64(x))) }

func (r scanRow[F]) seg(s, d, c int) F {
	return r.cum[(s+d)*r.C+c] - r.cum[s*r.C+c] + r.dur[(d-1)*r.C+c]
}

// reduce is ⊕ over xs: max, or a logsumexp that subtracts the maximum.
func (r scanRow[F]) reduce(xs []F) F {
	m := xs[0]
	for _, x := range xs[1:] {
		m = max(m, x)
	}
	if r.max {
		return m
	}
	var z F
	for _, x := range xs {
		z += exp(x - m)
	}
	return m + F(math.Log(float64(z)))
}

// alphas returns alpha and u, each [L+1][C].
func (r scanRow[F]) alphas() (alpha, u []F) {
	C := r.C
	alpha, u = make([]F, (r.L+1)*C), make([]F, (r.L+1)*C)
	buf := make([]F, max(r.K, C))
	for t := 0; t <= r.L; t++ {
		for c := 0; t > 0 && c < C; c++ {
			n := min(r.K, t)
			for d := 1; d <= n; d++ {
				buf[d-1] = u[(t-d)*C+c] + r.seg(t-d, d, c)
			}
			alpha[t*C+c] = r.reduce(buf[:n])
		}
		for c := 0; c < C; c++ {
			for cp := 0; cp < C; cp++ {
				buf[cp] = alpha[t*C+cp] + r.trans[cp*C+c]
			}
			u[t*C+c] = r.reduce(buf[:C])
		}
	}
	return alpha, u
}

func (r scanRow[F]) final(alpha []F) F { return r.reduce(alpha[r.L*r.C : (r.L+1)*r.C]) }
