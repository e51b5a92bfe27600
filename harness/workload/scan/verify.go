package scan

import (
	"fmt"
	"slices"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// Fixtures are the spec's inputs, no weights: cum_scores is the cumulative
// sum over positions of standard normal scores centred per row and label
// (as flash-semicrf's users make it: zero-centring keeps the sums near
// √T), transition and duration_bias are 0.5·N(0, 1), lengths the spec's.
// Values are rounded to the dtype once, so every backend and the reference
// start from the same numbers.
func (Workload) Fixtures(cfg result.Config, seed int64) (workload.Fixtures, error) {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return workload.Fixtures{}, err
	}
	s := ShapeOf(cfg)
	r := workload.Stream(seed, "cum_scores")
	cum := make([]float64, s.Batch*(s.T+1)*s.C)
	scores := make([]float64, s.T)
	for b := 0; b < s.Batch; b++ {
		for c := 0; c < s.C; c++ {
			var mean float64
			for t := range scores {
				scores[t] = r.NormFloat64()
				mean += scores[t]
			}
			mean /= float64(s.T)
			var sum float64
			for t, x := range scores {
				sum += x - mean
				cum[(b*(s.T+1)+t+1)*s.C+c] = d.round(sum)
			}
		}
	}
	normal := func(name string, n int) []float64 {
		r := workload.Stream(seed, name)
		v := make([]float64, n)
		for i := range v {
			v[i] = d.round(0.5 * r.NormFloat64())
		}
		return v
	}
	in := map[string]tensorfile.Tensor{
		"cum_scores":    d.tensor([]int{s.Batch, s.T + 1, s.C}, cum),
		"transition":    d.tensor([]int{s.C, s.C}, normal("transition", s.C*s.C)),
		"duration_bias": d.tensor([]int{s.K, s.C}, normal("duration_bias", s.K*s.C)),
		"lengths":       tensorfile.I64([]int{s.Batch}, s.Lengths()),
	}
	return workload.Fixtures{Weights: map[string]tensorfile.Tensor{}, Inputs: in}, nil
}

// Output is the first tensor a backend's Export writes: out.
func (Workload) Output(result.Config) string { return "out" }

// Outputs are out, and for backward and both the three input gradients.
func (Workload) Outputs(cfg result.Config) []string {
	if backwardPhase(cfg) {
		return []string{"out", "d_cum_scores", "d_transition", "d_duration_bias"}
	}
	return []string{"out"}
}

// Reference is out alone.
func (w Workload) Reference(cfg result.Config, fx workload.Fixtures) (tensorfile.Tensor, error) {
	fwd := cfg.Clone()
	fwd.Phase = workload.PhaseForward
	all, err := w.References(fwd, fx)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	return all["out"], nil
}

// References computes every tensor of Outputs in float64 from the fixtures.
func (Workload) References(cfg result.Config, fx workload.Fixtures) (map[string]tensorfile.Tensor, error) {
	s := ShapeOf(cfg)
	p := problem{Shape: s, semiring: cfg.Get("semiring")}
	shapes := map[string][]int{"cum_scores": {s.Batch, s.T + 1, s.C}, "transition": {s.C, s.C}, "duration_bias": {s.K, s.C}}
	vals := map[string][]float64{}
	for name, shape := range shapes {
		t, ok := fx.Inputs[name]
		if !ok {
			return nil, fmt.Errorf("scan reference: fixtures have no input %q", name)
		}
		if !slices.Equal(t.Shape, shape) {
			return nil, fmt.Errorf("scan reference: input %q has shape %v, the configuration needs %v", name, t.Shape, shape)
		}
		v, err := t.Float64s()
		if err != nil {
			return nil, fmt.Errorf("scan reference: input %q: %w", name, err)
		}
		vals[name] = v
	}
	p.cum, p.trans, p.dur, p.lengths = vals["cum_scores"], vals["transition"], vals["duration_bias"], s.Lengths()
	if lt, ok := fx.Inputs["lengths"]; ok {
		l, err := lt.Int32s()
		if err != nil || len(l) != s.Batch {
			return nil, fmt.Errorf("scan reference: input \"lengths\" must be %d integers (%d given): %v", s.Batch, len(l), err)
		}
		p.lengths = make([]int64, len(l))
		for i, x := range l {
			p.lengths[i] = int64(x)
		}
	}
	for b, l := range p.lengths {
		if l < 1 || l > int64(s.T) {
			return nil, fmt.Errorf("scan reference: lengths[%d] = %d is outside 1..T (T = %d)", b, l, s.T)
		}
	}
	g := p.solve(backwardPhase(cfg))
	out := map[string]tensorfile.Tensor{"out": tensorfile.F64([]int{s.Batch}, g.out)}
	if backwardPhase(cfg) {
		out["d_cum_scores"] = tensorfile.F64(shapes["cum_scores"], g.dCum)
		out["d_transition"] = tensorfile.F64(shapes["transition"], g.dTrans)
		out["d_duration_bias"] = tensorfile.F64(shapes["duration_bias"], g.dDur)
	}
	return out, nil
}

// Tolerance is the largest relative L2 error accepted for every compared
// tensor: the dtype's bound for the semiring and phase (see dtype), times
// growth(T).
func (Workload) Tolerance(cfg result.Config) float64 {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return 0
	}
	base := d.tolForward
	switch {
	case backwardPhase(cfg):
		base = d.tolBackward
	case cfg.Get("semiring") == SemiringEntropy:
		base = d.tolEntropy
	}
	return base * growth(ShapeOf(cfg).T)
}
