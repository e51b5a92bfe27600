package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// trainCheck is Engine.Check's part for the training step: why the device
// cannot run cfg's, or "".
func (e *Engine) trainCheck(cfg ttt.Config, g geometry) string {
	if !cfg.Backward {
		return ""
	}
	r := e.d.RT
	switch {
	case cfg.SeqLen < 2:
		return fmt.Sprintf("backward at seq_len %d: the loss has no next-token label (need seq_len >= 2)", cfg.SeqLen)
	case r.BLAS == nil:
		return fmt.Sprintf("the training step needs cuBLAS for its products (%v)", r.BLASErr)
	case g.bwdSmemBytes() > r.MaxDynSmem:
		return fmt.Sprintf("the %s inner backward kernel at f=%d needs %d bytes of shared memory per block; %s allows %d",
			cfg.TTTType, g.F, g.bwdSmemBytes(), e.d.Info().Name, r.MaxDynSmem)
	}
	return ""
}

// Outputs is the last call's every tensor: for a training step the logits
// and grad.<param> (ttt.GradPrefix) of every parameter of the
// configuration, in the spec's names and shapes, float32; otherwise the
// one Output.
func (j *Job) Outputs() (map[string]tensorfile.Tensor, error) {
	name, out, err := j.Output()
	if err != nil {
		return nil, err
	}
	outs := map[string]tensorfile.Tensor{name: out}
	if j.m.train == nil || j.m.cfg.InnerOnly {
		return outs, nil
	}
	grads, err := j.m.Grads()
	if err != nil {
		return nil, err
	}
	cfg := j.m.cfg
	for _, p := range ttt.Params(j.m.size, cfg.TTTType, cfg.MiniBatch, cfg.Backbone) {
		g, ok := grads[p.Name]
		if !ok || len(g.Shape) != len(p.Shape) {
			return nil, fmt.Errorf("outputs: no gradient of %q in its shape %v", p.Name, p.Shape)
		}
		outs[ttt.GradPrefix+p.Name] = g
	}
	return outs, nil
}
