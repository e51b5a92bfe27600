package gemm

import (
	"context"
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The product on a process-wide device (gpu.Shared), for the backend.

// Available is nil when the process-wide device of kind (gpu.Shared)
// opens and, on cuda, cuBLAS loaded on it; otherwise the reason. (On rocm
// hipBLASLt and rocBLAS load at the first product, which says why not.)
func Available(kind string) error {
	d, err := gpu.Shared(kind)
	if err != nil {
		return err
	}
	if kind == "cuda" && d.RT.BLAS == nil {
		return fmt.Errorf("gemm needs cuBLAS: %v", d.RT.BLASErr)
	}
	return nil
}

// TimeShared is TimeWith on gpu.Shared(kind).
func TimeShared(ctx context.Context, kind string, spec Spec, warmup, repeats int, seed uint64, mode Mode) (Timing, error) {
	d, err := gpu.Shared(kind)
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

// ExportSharedWith is ExportWith on gpu.Shared(kind).
func ExportSharedWith(ctx context.Context, kind string, spec Spec, a, b []float32, mode Mode) ([]float32, error) {
	d, err := gpu.Shared(kind)
	if err != nil {
		return nil, err
	}
	return ExportWith(ctx, d, spec, a, b, mode)
}
