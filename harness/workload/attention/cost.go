package attention

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// Cost counts one timed call of cfg's phase. With
//
//	F = 4·batch·heads·seq_len·kv_len·head_dim   (q·kᵀ and p·v, 2 FLOPs a term)
//
// halved when causal (about half the scores exist; the diagonal's extra
// terms are ignored, as the FlashAttention papers count), FLOPs is F for
// forward, 2.5·F for backward (five products against two) and 3.5·F for
// both. The softmax's exponentials and sums are not counted.
//
// Bytes is the compulsory traffic in the dtype's size, each tensor moved
// once, with Q = batch·heads·seq_len·head_dim and K = batch·kv_heads·kv_len·head_dim:
//
//	forward   q, k, v read, out written:                  2Q + 2K
//	backward  q, k, v, out, dout read; dq, dk, dv written: 4Q + 4K
//	both      q, k, v, dout read; out, dq, dk, dv written: 4Q + 4K
//
// The softmax statistics saved for the backward are left out. Everything is
// float64: the products can pass 2^53, where the last units do not matter.
func (Workload) Cost(cfg result.Config) (workload.Cost, error) {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return workload.Cost{}, err
	}
	s := ShapeOf(cfg)
	q := float64(s.Batch) * float64(s.Heads) * float64(s.SeqLen) * float64(s.HeadDim)
	k := float64(s.Batch) * float64(s.KVHeads) * float64(s.KVLen) * float64(s.HeadDim)
	moved := 2*q + 2*k
	if cfg.Phase == workload.PhaseBackward || cfg.Phase == workload.PhaseBoth {
		moved = 4*q + 4*k
	}
	return workload.Cost{FLOPs: flops(cfg), Bytes: moved * float64(d.bytes)}, nil
}

// phaseFactor is a phase's FLOPs in units of the forward's.
func phaseFactor(phase string) float64 {
	switch phase {
	case workload.PhaseBackward:
		return 2.5
	case workload.PhaseBoth:
		return 3.5
	}
	return 1
}

func flops(cfg result.Config) float64 {
	s := ShapeOf(cfg)
	f := 4 * float64(s.Batch) * float64(s.Heads) * float64(s.SeqLen) * float64(s.KVLen) * float64(s.HeadDim)
	if s.Causal {
		f /= 2
	}
	return f * phaseFactor(cfg.Phase)
}

// Rank is the FLOP count of the phase: the larger call is the one more
// likely to run out of memory or time.
func (Workload) Rank(cfg result.Config) float64 { return flops(cfg) }

// Throughput is TFLOP/s at the median time; 0 for a time that is not
// positive, so a broken sample never reports an infinite rate.
func (Workload) Throughput(cfg result.Config, medianMs float64) workload.Throughput {
	t := workload.Throughput{Unit: "TFLOP/s"}
	if medianMs > 0 {
		t.Value = flops(cfg) / (medianMs * 1e-3) / 1e12
	}
	return t
}
