package gemm

import (
	"context"
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The product on the process-wide CUDA device (gpu.Shared), for the backend.

// Available is nil when the process-wide CUDA device (Shared("cuda"))
// opens and cuBLAS loaded on it; otherwise the reason.
func Available() error {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return err
	}
	if d.RT.BLAS == nil {
		return fmt.Errorf("gemm needs cuBLAS: %v", d.RT.BLASErr)
	}
	return nil
}

// TimeShared is TimeWith on gpu.Shared("cuda").
func TimeShared(ctx context.Context, spec Spec, warmup, repeats int, seed uint64, mode Mode) (Timing, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return Timing{}, err
	}
	return TimeWith(ctx, d, spec, warmup, repeats, seed, mode)
}

// ExportShared is Export on gpu.Shared("cuda").
func ExportShared(ctx context.Context, spec Spec, a, b []float32) ([]float32, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return nil, err
	}
	return Export(ctx, d, spec, a, b)
}

// ExportSharedWith is ExportWith on gpu.Shared("cuda").
func ExportSharedWith(ctx context.Context, spec Spec, a, b []float32, mode Mode) ([]float32, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return nil, err
	}
	return ExportWith(ctx, d, spec, a, b, mode)
}
