package gemm

import (
	"context"
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Bench times Y[M,N] = X[M,K] W[K,N] with the device's dense engine on
// random-free but nonzero data (ones scaled), returning TFLOP/s from the
// median of reps samples of the runtime's timing loop (two warmup calls):
// the matrix-unit ceiling ../../docs/FLOOR.md measures against.
func Bench(d *gpu.Device, bf16 bool, M, N, K, reps int) (float64, error) {
	if d.RT.BLAS == nil {
		return 0, fmt.Errorf("gpu: no cuBLAS loaded: %v", d.RT.BLASErr)
	}
	var tf float64
	err := d.W.Do(func() error {
		r, b := d.RT, d.RT.BLAS
		el := int64(4)
		if bf16 {
			el = 2
		}
		var ptrs [3]gpu.Ptr
		for i, n := range []int64{int64(M) * int64(K), int64(K) * int64(N), int64(M) * int64(N)} {
			p, err := r.Alloc(n * el)
			if err != nil {
				return err
			}
			defer r.Free(p)
			word := uint32(0x3c003c00) // bf16 pair 2^-7 (x2)
			if !bf16 {
				word = 0x3c000000 // float32 2^-7
			}
			if err := r.Fill32(p, word, n*el/4); err != nil {
				return err
			}
			ptrs[i] = p
		}
		mode := int32(gpu.CublasPedanticMath)
		if bf16 {
			mode = gpu.CublasFloat32Sums // as the models run it
		}
		if err := b.Check("set math mode", b.SetMathMode(b.H, mode)); err != nil {
			return err
		}
		launch := func() error {
			return b.Gemm(b.H, bf16, false, false, M, N, K, ptrs[0], K, ptrs[1], N, ptrs[2], N, 0)
		}
		best, err := r.TimedLaunches(context.Background(), "bench gemm", launch, gpu.Calls{Warmup: 2, Repeats: reps})
		if err != nil {
			return err
		}
		tf = 2 * float64(M) * float64(N) * float64(K) / (median(best) * 1e-3) / 1e12
		return nil
	})
	return tf, err
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ { // insertion sort: a handful of samples
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}
