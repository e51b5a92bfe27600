package reference

import (
	"fmt"
	"slices"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// Workload is the TTT workload as registered: ttt.Workload's declarations,
// and the float64 reference that `xbench verify` grades every backend
// against, computed here in the harness's process by this package's model
// (no backend is the grader). It lives here, not in package ttt, because
// the model itself is built on ttt's sizes and parameter names.
type Workload struct{ ttt.Workload }

var (
	_ workload.Workload    = Workload{}
	_ workload.Referencer  = Workload{}
	_ workload.MultiOutput = Workload{}
)

// Reference implements workload.Referencer: Output(cfg) alone.
func (w Workload) Reference(cfg result.Config, fx workload.Fixtures) (tensorfile.Tensor, error) {
	all, err := w.References(cfg, fx)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	return all[w.Output(cfg)], nil
}

// References implements workload.MultiOutput: the model run once in
// float64 on the fixtures, giving "logits" (forward), "out" (inner_only)
// or, for the training step, the logits and grad.<param> of every
// parameter in the parameter's shape (docs/ttt-backward.md).
func (w Workload) References(cfg result.Config, fx workload.Fixtures) (map[string]tensorfile.Tensor, error) {
	t := ttt.From(cfg)
	if t.Backbone == "" { // a configuration from before the backbone axis
		t.Backbone = "transformer"
	}
	s, err := ttt.LookupSize(t.ModelSize)
	if err != nil {
		return nil, err
	}
	if t.InnerOnly {
		return innerReference(t, s, fx)
	}
	if t.Backward && t.SeqLen < 2 {
		return nil, fmt.Errorf("backward at --seq-len %d: the loss has no next-token label (need --seq-len >= 2)", t.SeqLen)
	}
	m, err := NewModel[float64](s, t.TTTType, t.Backbone, t.MiniBatch, fx.Weights)
	if err != nil {
		return nil, err
	}
	tokens, err := input(fx.Inputs, "tokens", []int{t.Batch, t.SeqLen})
	if err != nil {
		return nil, err
	}
	ids, err := tokens.Int32s()
	if err != nil {
		return nil, fmt.Errorf("reference inputs: tensor \"tokens\": %w", err)
	}
	logitsShape := []int{t.Batch, t.SeqLen, s.Vocab}
	if !t.Backward {
		logits, err := m.Forward(ids, t.Batch, t.SeqLen)
		if err != nil {
			return nil, err
		}
		return map[string]tensorfile.Tensor{"logits": tensorfile.F64(logitsShape, logits)}, nil
	}
	logits, _, err := m.ForwardBackward(ids, t.Batch, t.SeqLen)
	if err != nil {
		return nil, err
	}
	out := map[string]tensorfile.Tensor{"logits": tensorfile.F64(logitsShape, logits)}
	grads := m.Grads()
	for _, p := range ttt.Params(s, t.TTTType, t.MiniBatch, t.Backbone) {
		g, ok := grads[p.Name]
		if !ok || len(g) != p.Elements() {
			return nil, fmt.Errorf("reference: gradient of %q has %d elements, want %d", p.Name, len(g), p.Elements())
		}
		out[ttt.GradPrefix+p.Name] = tensorfile.F64(p.Shape, g)
	}
	return out, nil
}

// innerReference runs layer 0's inner model alone on xq, xk, xv and gate.
func innerReference(t ttt.Config, s ttt.Size, fx workload.Fixtures) (map[string]tensorfile.Tensor, error) {
	p, err := NewInner[float64](fx.Weights, "layers.0.ttt.", s.Heads, s.HeadDim, t.MiniBatch, t.TTTType == "mlp", ttt.BaseLR(t.TTTType))
	if err != nil {
		return nil, err
	}
	shape := []int{t.Batch, s.Heads, t.SeqLen, s.HeadDim}
	xs := map[string][]float64{}
	for name, sh := range map[string][]int{"xq": shape, "xk": shape, "xv": shape, "gate": {t.Batch, s.Heads, t.SeqLen}} {
		in, err := input(fx.Inputs, name, sh)
		if err != nil {
			return nil, err
		}
		if xs[name], err = in.Float64s(); err != nil {
			return nil, fmt.Errorf("reference inputs: tensor %q: %w", name, err)
		}
	}
	out := make([]float64, len(xs["xq"]))
	p.Run(out, xs["xq"], xs["xk"], xs["xv"], xs["gate"], t.Batch, t.SeqLen)
	return map[string]tensorfile.Tensor{"out": tensorfile.F64(shape, out)}, nil
}

// input is one fixture tensor, checked for presence and shape.
func input(in map[string]tensorfile.Tensor, name string, shape []int) (tensorfile.Tensor, error) {
	t, ok := in[name]
	if !ok {
		return t, fmt.Errorf("reference inputs: missing tensor %q", name)
	}
	if !slices.Equal(t.Shape, shape) {
		return t, fmt.Errorf("reference inputs: tensor %q has shape %v, want %v", name, t.Shape, shape)
	}
	return t, nil
}
