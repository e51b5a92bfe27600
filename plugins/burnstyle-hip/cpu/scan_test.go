package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

func scanFixture(s ScanShape, seed uint64) (cum, trans, dur []float64, lengths []int64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	cum = make([]float64, s.Batch*(s.T+1)*s.C)
	for b := 0; b < s.Batch; b++ {
		for t := 1; t <= s.T; t++ {
			for c := 0; c < s.C; c++ {
				cum[(b*(s.T+1)+t)*s.C+c] = cum[(b*(s.T+1)+t-1)*s.C+c] + rng.NormFloat64()
			}
		}
	}
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 0.5 * rng.NormFloat64()
		}
		return v
	}
	lengths = make([]int64, s.Batch)
	for b := range lengths {
		lengths[b] = int64(s.T - b*s.T/(2*s.Batch))
	}
	return cum, vec(s.C * s.C), vec(s.K * s.C), lengths
}

// TestScanLogGradientsAreFiniteDifferences checks every gradient element of
// Σ logZ against a central difference of the forward, in float64.
func TestScanLogGradientsAreFiniteDifferences(t *testing.T) {
	s := ScanShape{T: 9, K: 3, C: 3, Batch: 2, Semiring: "log"}
	cum, trans, dur, lengths := scanFixture(s, 1)
	r, err := Scan(s, cum, trans, dur, lengths, true)
	if err != nil {
		t.Fatal(err)
	}
	total := func() float64 {
		f, err := Scan(s, cum, trans, dur, lengths, false)
		if err != nil {
			t.Fatal(err)
		}
		return f.Out[0] + f.Out[1]
	}
	const h = 1e-6
	for _, p := range []struct {
		name string
		x, g []float64
	}{{"cum", cum, r.DCum}, {"trans", trans, r.DTrans}, {"dur", dur, r.DDur}} {
		for i := range p.x {
			old := p.x[i]
			p.x[i] = old + h
			up := total()
			p.x[i] = old - h
			down := total()
			p.x[i] = old
			if fd := (up - down) / (2 * h); math.Abs(fd-p.g[i]) > 1e-6 {
				t.Errorf("d%s[%d] = %v, finite difference %v", p.name, i, p.g[i], fd)
			}
		}
	}
}

// TestScanSemiringsAndDtypes: max <= log (a max of terms is at most their
// logsumexp), entropy is positive, the max gradient counts whole segments
// (each row's cum gradient sums to 0, one transition per segment), and
// float32 agrees with float64.
func TestScanSemiringsAndDtypes(t *testing.T) {
	s := ScanShape{T: 24, K: 5, C: 4, Batch: 3}
	cum, trans, dur, lengths := scanFixture(s, 2)
	get := func(sr string, grads bool) ScanResult[float64] {
		s.Semiring = sr
		r, err := Scan(s, cum, trans, dur, lengths, grads)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	lg, mx, ent := get("log", false), get("max", true), get("entropy", false)
	for b := range lg.Out {
		if mx.Out[b] > lg.Out[b] || ent.Out[b] <= 0 {
			t.Errorf("row %d: max %v log %v entropy %v", b, mx.Out[b], lg.Out[b], ent.Out[b])
		}
	}
	var segs, trs float64
	for _, x := range mx.DDur {
		segs += x
	}
	for _, x := range mx.DTrans {
		trs += x
	}
	if segs != trs || segs < 3 {
		t.Errorf("max gradient: %v segments, %v transitions", segs, trs)
	}
	s.Semiring = "log"
	c32, t32, d32 := make([]float32, len(cum)), make([]float32, len(trans)), make([]float32, len(dur))
	for i := range cum {
		c32[i] = float32(cum[i])
	}
	for i := range trans {
		t32[i] = float32(trans[i])
	}
	for i := range dur {
		d32[i] = float32(dur[i])
	}
	r32, err := Scan(s, c32, t32, d32, lengths, false)
	if err != nil {
		t.Fatal(err)
	}
	for b := range lg.Out {
		if math.Abs(float64(r32.Out[b])-lg.Out[b]) > 1e-5*math.Abs(lg.Out[b]) {
			t.Errorf("row %d: float32 %v, float64 %v", b, r32.Out[b], lg.Out[b])
		}
	}
	if _, err := Scan(ScanShape{T: 3, K: 4, C: 1, Batch: 1, Semiring: "log"}, cum[:4], trans[:1], dur[:4], []int64{3}, false); err == nil {
		t.Error("K > T accepted")
	}
}
