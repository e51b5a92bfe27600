package ttt

import "github.com/xbench/xbench/harness/workload/ttt"

// EstimateBytes bounds what one step of cfg holds at once on this path:
// the generated F32 weight tensors and the model's copy at the run's
// precision, every tensor the step's tape creates (with their gradients
// and the parameters' for a training step), the largest product's scratch
// and the inputs. The per-token counts are those of the operations in
// graph.go and inner.go, with a margin; TestEstimateBytesBoundsAStep holds
// them against what steps allocate.
func EstimateBytes(cfg ttt.Config, s ttt.Size) int64 {
	if cfg.Backbone == "" {
		cfg.Backbone = "transformer"
	}
	elem := int64(4)
	if cfg.Dtype == "float64" {
		elem = 8
	}
	tokens := int64(cfg.Batch) * int64(cfg.SeqLen)
	C, I, nh, f, K, V := int64(s.Hidden), int64(s.MLP), int64(s.Heads), int64(s.HeadDim), int64(cfg.MiniBatch), int64(s.Vocab)
	// One layer's elements per token: the inner loop's [K, f] rows, its
	// [K, K] learning rates and its per-mini-batch states ([f, h] per head).
	perLayer := 70*C + 7*nh*K + 3*nh*f*f/K
	if cfg.TTTType == "mlp" {
		perLayer = 130*C + 7*nh*K + 5*nh*f*4*f/K
	}
	if cfg.InnerOnly {
		p := ttt.NumInnerParams(s, cfg.TTTType, cfg.MiniBatch)
		return p*(4+elem) + tokens*(perLayer+4*C)*elem // with the inputs: xq, xk, xv and the gate
	}
	perLayer += 4 * I // SwiGLU
	if cfg.Backbone == "mamba" {
		perLayer += 10 * C
	}
	p := ttt.NumParams(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone)
	acts := tokens * (int64(s.Layers)*perLayer + V + 6*C)
	grads := int64(0)
	if cfg.Backward {
		acts = 2*acts + tokens*V // every tensor's gradient, and the loss's
		grads = p
	}
	return p*(4+elem) + grads*elem + 2*V*C*elem + acts*elem + 4*tokens
}
