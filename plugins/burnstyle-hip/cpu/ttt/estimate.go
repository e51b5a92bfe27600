package ttt

import "github.com/xbench/xbench/harness/workload/ttt"

// EstimateBytes bounds what one step of cfg holds at once on this path:
// the generated F32 weight tensors and the model's copy at the run's
// precision, the inputs, and for a training step every tensor its tape
// keeps with their gradients and the parameters', for a forward one
// layer's tensors and those outside the layers (with the collector's
// slack). The per-token counts are those of the operations in
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
	outside := tokens * (V + 6*C) // the residual stream, the final norm, the logits
	if !cfg.Backward {
		// A forward records nothing: one layer's tensors at a time beside
		// the rest, twice over for the collector's slack (GOGC 100).
		return p*(4+elem) + 2*(tokens*perLayer+outside)*elem + 4*tokens
	}
	// The training step's tape keeps every tensor and gives each a
	// gradient, the loss's among them, and the parameters get theirs.
	acts := 2*(tokens*int64(s.Layers)*perLayer+outside) + tokens*V
	return p*(4+elem) + p*elem + acts*elem + 4*tokens
}
