package ttt

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// GradPrefix names a parameter's gradient in a backward-phase export:
// "grad.layers.0.ttt.wq" is the gradient of the mean next-token
// cross-entropy with respect to layers.0.ttt.wq (docs/ttt-backward.md).
const GradPrefix = "grad."

// Outputs names the tensors verify compares (workload.MultiOutput, with
// reference.Workload's References): the logits, and for the
// backward phase the gradient of every parameter, in the spec's order, so
// verify grades each parameter on its own.
func (w Workload) Outputs(c result.Config) []string {
	out := []string{w.Output(c)}
	if c.Phase != workload.PhaseBackward {
		return out
	}
	t := From(c)
	s, err := LookupSize(t.ModelSize)
	if err != nil {
		return out
	}
	for _, p := range Params(s, t.TTTType, t.MiniBatch, t.Backbone) {
		out = append(out, GradPrefix+p.Name)
	}
	return out
}
