package scan

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// Cost counts one timed call. The forward's FLOPs are the spec's
//
//	F = 4 · Σ_b L_b · K · C²
//
// (each of the K·C² terms into a position: the add of alpha and edge, and
// the reduction counted as 2; the edge's own adds amortised), whatever a
// backend's algorithm does (the u-trick does O(K·C + C²) a position: it
// then runs above "peak", which is the point of counting one definition).
// backward is 2F (the beta recursion and the marginals), both 3F; entropy
// carries a second (expectation) value, 2F. Bytes is the inputs read and
// the outputs written once, in the dtype's size.
func (Workload) Cost(cfg result.Config) (workload.Cost, error) {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return workload.Cost{}, err
	}
	s := ShapeOf(cfg)
	cum := float64(s.Batch) * float64(s.T+1) * float64(s.C)
	params := float64(s.C*s.C + s.K*s.C)
	moved := (cum+params)*float64(d.bytes) + float64(8*s.Batch) + float64(s.Batch*d.bytes) // + lengths, out
	if backwardPhase(cfg) {
		moved += (cum + params) * float64(d.bytes) // the three gradients
	}
	return workload.Cost{FLOPs: flops(cfg), Bytes: moved}, nil
}

func flops(cfg result.Config) float64 {
	s := ShapeOf(cfg)
	f := 4 * s.Positions() * float64(s.K) * float64(s.C) * float64(s.C)
	switch {
	case cfg.Phase == workload.PhaseBackward:
		f *= 2
	case cfg.Phase == workload.PhaseBoth:
		f *= 3
	case cfg.Get("semiring") == SemiringEntropy:
		f *= 2
	}
	return f
}

// Rank is the FLOP count: the larger call is the one more likely to run
// out of memory (a backend keeping every alpha holds batch·T·C, one keeping
// edges batch·T·K·C²) or time.
func (Workload) Rank(cfg result.Config) float64 { return flops(cfg) }

// Throughput is positions per second, Σ_b L_b / median seconds: the rate
// structured-prediction users quote, comparable across K and C.
func (Workload) Throughput(cfg result.Config, medianMs float64) workload.Throughput {
	t := workload.Throughput{Unit: "positions/s"}
	if medianMs > 0 {
		t.Value = ShapeOf(cfg).Positions() / (medianMs * 1e-3)
	}
	return t
}
