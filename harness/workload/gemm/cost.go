package gemm

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// Cost counts one timed call: one product of batch·m·n output elements,
// each a k-long dot product of one multiply and one add per term:
//
//	FLOPs = 2·batch·m·n·k
//
// Bytes is the compulsory traffic: A and B read once in the input dtype,
// C written once in the output dtype, nothing re-read (a tiled kernel that
// re-reads from L2 or HBM moves more; this is the roofline's lower bound):
//
//	Bytes = batch·(m·k + k·n)·in_bytes + batch·m·n·out_bytes
//
// in_bytes is 4 for float32 and tf32 (TF32 is a compute mode, the storage
// is float32), 2 for bfloat16 and float16, 1 for float8_e4m3; out_bytes is
// 4, 4, 2, 2 and 2 (e4m3 products are written as bfloat16).
//
// Everything is counted in float64: the product of four bounded dimensions
// can pass 2^53, where the last few units do not matter to a rate.
func (Workload) Cost(cfg result.Config) (workload.Cost, error) {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return workload.Cost{}, err
	}
	b, m, n, k := dims(cfg)
	B, M, N, K := float64(b), float64(m), float64(n), float64(k)
	return workload.Cost{
		FLOPs: 2 * B * M * N * K,
		Bytes: B*(M*K+K*N)*float64(d.inBytes) + B*M*N*float64(d.outBytes),
	}, nil
}

// Rank is the FLOP count: a larger product is the one more likely to run
// out of memory or time, whatever its aspect ratio.
func (Workload) Rank(cfg result.Config) float64 {
	b, m, n, k := dims(cfg)
	return 2 * float64(b) * float64(m) * float64(n) * float64(k)
}

// Throughput is TFLOP/s at the median time; 0 for a time that is not
// positive, so a broken sample never reports an infinite rate.
func (w Workload) Throughput(cfg result.Config, medianMs float64) workload.Throughput {
	t := workload.Throughput{Unit: "TFLOP/s"}
	if medianMs > 0 {
		t.Value = w.Rank(cfg) / (medianMs * 1e-3) / 1e12
	}
	return t
}
