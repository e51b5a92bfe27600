package kernels

import (
	gpugemm "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
)

// gcSlack is the Go heap's growth before a collection (GOGC 100): what one
// call allocates may live beside the previous call's until the collector runs.
const gcSlack = 2

// gemmHostBytes bounds the CPU GEMM: A and B, their rounded copies (bfloat16
// and float16), and C of this call and of the one before. In float64 so no
// shape overflows.
func gemmHostBytes(s gpugemm.Spec) float64 {
	b, m, n, k := float64(s.Batch), float64(s.M), float64(s.N), float64(s.K)
	ab := b*m*k + b*k*n
	return 4 * (ab + gcSlack*(ab+b*m*n))
}

// attentionHostBytes bounds the CPU attention: q, k, v, the output of this
// call and the one before, and one row of scores per worker.
func attentionHostBytes(s cpu.AttentionShape, workers int) float64 {
	q := float64(s.Batch) * float64(s.Heads) * float64(s.SeqLen) * float64(s.HeadDim)
	kv := float64(s.Batch) * float64(s.KVHeads) * float64(s.KVLen) * float64(s.HeadDim)
	return 4 * (q + 2*kv + gcSlack*q + float64(s.KVLen)*float64(workers))
}

// scanHostBytes bounds the CPU scan: what scanMemory counts for one call,
// twice over for the collector's slack. Computed in float64 like the others.
func scanHostBytes(s cpu.ScanShape, grads bool, item int64) float64 {
	rows := float64(s.Batch) * float64(s.T+1) * float64(s.C)
	in := rows + float64(s.C)*float64(s.C) + float64(s.K)*float64(s.C)
	state := 2 * rows
	if s.Semiring == "entropy" || grads {
		state *= 2
	}
	work := 0.0
	if grads {
		work = in
	}
	return float64(item) * (in + gcSlack*(state+work))
}

// attentionGradHostBytes bounds the CPU attention backward phases: q, k, v,
// dout, out and its row statistics held from prepare, the gradients of this
// call and of the one before, and per worker a kv head's float64 dk and dv
// and rows of probabilities.
func attentionGradHostBytes(s cpu.AttentionShape, workers int) float64 {
	q := float64(s.Batch) * float64(s.Heads) * float64(s.SeqLen) * float64(s.HeadDim)
	kv := float64(s.Batch) * float64(s.KVHeads) * float64(s.KVLen) * float64(s.HeadDim)
	head := float64(s.KVLen) * float64(s.HeadDim)
	return 4*(3*q+2*kv+gcSlack*(2*q+2*kv)) + float64(workers)*(16*head+8*float64(s.KVLen))
}
