package scan

import (
	"math"
	"math/rand/v2"
	"testing"
)

// brute enumerates every segmentation of one row (every composition of L
// into parts of at most K, every labelling, every label before the first
// segment) and returns logZ, the best score, the entropy, and the best
// path's segments; the reference's factored recursion must agree with it.
func brute(r row) (logZ, best, entropy float64, path [][3]int) {
	var scores []float64
	var paths [][][3]int
	var walk func(t, prev int, score float64, segs [][3]int)
	walk = func(t, prev int, score float64, segs [][3]int) {
		if t == r.L {
			scores = append(scores, score)
			paths = append(paths, append([][3]int(nil), segs...))
			return
		}
		for d := 1; d <= min(r.K, r.L-t); d++ {
			for c := 0; c < r.C; c++ {
				froms := []int{prev}
				if prev < 0 { // the first segment: every c' with alpha[0, c'] = 0
					froms = froms[:0]
					for cp := 0; cp < r.C; cp++ {
						froms = append(froms, cp)
					}
				}
				for _, cp := range froms {
					walk(t+d, c, score+r.seg(t, d, c)+r.trans[cp*r.C+c], append(segs, [3]int{t, d, c}))
				}
			}
		}
	}
	walk(0, -1, 0, nil)
	logZ, best = math.Inf(-1), math.Inf(-1)
	for i, s := range scores {
		logZ = logAdd(logZ, s)
		if s > best {
			best, path = s, paths[i]
		}
	}
	for _, s := range scores {
		p := math.Exp(s - logZ)
		entropy -= p * (s - logZ)
	}
	return logZ, best, entropy, path
}

func randomRow(seed uint64, L, K, C int) row {
	rng := rand.New(rand.NewPCG(seed, 7))
	cum := make([]float64, (L+1)*C)
	for t := 1; t <= L; t++ {
		for c := 0; c < C; c++ {
			cum[t*C+c] = cum[(t-1)*C+c] + rng.NormFloat64()
		}
	}
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 0.5 * rng.NormFloat64()
		}
		return v
	}
	return row{K: K, C: C, L: L, cum: cum, trans: vec(C * C), dur: vec(K * C)}
}

func TestReferenceAgreesWithEnumeration(t *testing.T) {
	for _, tc := range []struct{ L, K, C int }{{1, 1, 1}, {3, 2, 2}, {5, 3, 2}, {6, 3, 3}, {7, 4, 2}, {6, 6, 2}} {
		r := randomRow(uint64(tc.L*100+tc.K*10+tc.C), tc.L, tc.K, tc.C)
		logZ, best, entropy, _ := brute(r)
		r.semiring = SemiringLog
		if got := r.forward(); math.Abs(got-logZ) > 1e-12*math.Max(1, math.Abs(logZ)) {
			t.Errorf("%+v log: %v, enumeration %v", tc, got, logZ)
		}
		r.semiring = SemiringMax
		if got := r.forward(); math.Abs(got-best) > 1e-12*math.Max(1, math.Abs(best)) {
			t.Errorf("%+v max: %v, enumeration %v", tc, got, best)
		}
		r.semiring = SemiringEntropy
		if got := r.entropy(); math.Abs(got-entropy) > 1e-10*math.Max(1, math.Abs(entropy)) {
			t.Errorf("%+v entropy: %v, enumeration %v", tc, got, entropy)
		}
	}
}

// TestLogGradientsMatchFiniteDifferences checks every gradient element of
// logZ against a central difference of the forward.
func TestLogGradientsMatchFiniteDifferences(t *testing.T) {
	r := randomRow(3, 7, 3, 3)
	r.semiring = SemiringLog
	dCum, dTrans, dDur := make([]float64, len(r.cum)), make([]float64, len(r.trans)), make([]float64, len(r.dur))
	r.marginals(dCum, dTrans, dDur)
	const h = 1e-6
	for _, p := range []struct {
		name string
		x, g []float64
	}{{"cum", r.cum, dCum}, {"trans", r.trans, dTrans}, {"dur", r.dur, dDur}} {
		for i := range p.x {
			old := p.x[i]
			p.x[i] = old + h
			up := r.forward()
			p.x[i] = old - h
			down := r.forward()
			p.x[i] = old
			if fd := (up - down) / (2 * h); math.Abs(fd-p.g[i]) > 1e-6 {
				t.Errorf("d%s[%d] = %v, finite difference %v", p.name, i, p.g[i], fd)
			}
		}
	}
}

// TestMaxGradientIsTheBestPath checks the backtrace against the
// enumeration's best path, segment by segment.
func TestMaxGradientIsTheBestPath(t *testing.T) {
	r := randomRow(11, 8, 3, 3)
	r.semiring = SemiringMax
	_, best, _, path := brute(r)
	dCum, dTrans, dDur := make([]float64, len(r.cum)), make([]float64, len(r.trans)), make([]float64, len(r.dur))
	if got := r.backtrace(dCum, dTrans, dDur); math.Abs(got-best) > 1e-12 {
		t.Fatalf("backtrace score %v, enumeration %v", got, best)
	}
	wantCum, wantDur := make([]float64, len(r.cum)), make([]float64, len(r.dur))
	for _, s := range path {
		wantCum[(s[0]+s[1])*r.C+s[2]]++
		wantCum[s[0]*r.C+s[2]]--
		wantDur[(s[1]-1)*r.C+s[2]]++
	}
	for i := range wantCum {
		if dCum[i] != wantCum[i] {
			t.Fatalf("dCum = %v, the best path %v gives %v", dCum, path, wantCum)
		}
	}
	for i := range wantDur {
		if dDur[i] != wantDur[i] {
			t.Fatalf("dDur = %v, want %v", dDur, wantDur)
		}
	}
	var n float64
	for _, x := range dTrans {
		n += x
	}
	if int(n) != len(path) {
		t.Errorf("dTrans counts %v transitions, the path has %d segments", n, len(path))
	}
}
