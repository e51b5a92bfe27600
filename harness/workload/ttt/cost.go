package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/workload"
)

// Cost is the work of one timed call (see workload.Cost).
type Cost = workload.Cost

// DtypeBytes is the storage size of one element. tf32 is stored as float32.
func DtypeBytes(dtype string) (int, error) {
	switch dtype {
	case "float32", "tf32":
		return 4, nil
	case "bfloat16", "float16":
		return 2, nil
	case "float64":
		return 8, nil
	}
	return 0, fmt.Errorf("bytes of dtype %q: unknown dtype (allowed: float32, tf32, bfloat16, float16, float64)", dtype)
}

// BackwardFactor is how much a timed backward call costs relative to the
// forward alone: the forward, then for every matmul one product for the
// input gradient and one for the weight gradient (the usual 1 + 2), and for
// memory one more read of each saved activation and weight plus one write
// of its gradient. It is the standard approximation, not an exact count of
// the element-wise work.
const BackwardFactor = 3

// CostOf counts one timed call of cfg. FLOPs are ForwardFLOPs (times
// BackwardFactor for a backward configuration).
//
// Bytes are the compulsory traffic in the configuration's dtype (e bytes
// per element), assuming every tensor crosses memory once per use and
// nothing stays in cache between kernels; the inner model's state is kept
// on chip across mini-batches, as the fused kernels do, so only its initial
// value is read. With T = B*L tokens, C hidden, I MLP width, V vocab, nh
// heads and f head dim:
//
//	weights              = NumParams * e, read once
//	per layer, TTT block = 18*T*C*e: norm (read+write), q/k/v projections
//	                       (read x, write 3), inner loop (read 3, write 1),
//	                       post-norm (read+write), wo (read+write), residual
//	                       (read 2, write 1); plus 2*T*nh*e for the gate
//	per layer, MLP block = (6*C + 6*I)*T*e: norm (read+write), gate and up
//	                       (read x, write 2 of I), SwiGLU (read 2, write 1 of
//	                       I), down (read I, write C), residual (read 2,
//	                       write 1)
//	mamba backbone       = 16*T*C*e more per layer (conv block, q/k
//	                       convolutions, output gate)
//	ends                 = 2*T*C*e embedding gather, 2*T*C*e final norm,
//	                       T*C*e + T*V*e head (read x, write logits)
//	inner-only           = inner parameters + read xq, xk, xv (3*T*nh*f*e)
//	                       and the gate (T*nh*e), write out (T*nh*f*e)
//
// Backward multiplies bytes by BackwardFactor like FLOPs, so a phase does
// not move a configuration along the intensity axis.
func CostOf(cfg Config) (Cost, error) {
	s, err := LookupSize(cfg.ModelSize)
	if err != nil {
		return Cost{}, fmt.Errorf("cost of %s: %w", cfg.ModelSize, err)
	}
	e, err := DtypeBytes(cfg.Dtype)
	if err != nil {
		return Cost{}, err
	}
	T := float64(cfg.Batch) * float64(cfg.SeqLen)
	C, I, V, nh, f := float64(s.Hidden), float64(s.MLP), float64(s.Vocab), float64(s.Heads), float64(s.HeadDim)
	var elems float64
	if cfg.InnerOnly {
		elems = float64(NumInnerParams(s, cfg.TTTType, cfg.MiniBatch)) + 4*T*nh*f + T*nh
	} else {
		perLayer := 18*T*C + 2*T*nh + (6*C+6*I)*T
		if cfg.Backbone == "mamba" {
			perLayer += 16 * T * C
		}
		elems = float64(NumParams(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone)) +
			float64(s.Layers)*perLayer + 5*T*C + T*V
	}
	c := Cost{FLOPs: ForwardFLOPs(cfg, s), Bytes: elems * float64(e)}
	if cfg.Backward {
		c.FLOPs *= BackwardFactor
		c.Bytes *= BackwardFactor
	}
	return c, nil
}
