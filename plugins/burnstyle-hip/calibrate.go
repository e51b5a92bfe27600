package burnstylehip

import (
	"context"
	"fmt"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/numeric"
)

var _ backend.Calibrator = (*Native)(nil)

// Calibration sizes for the CPU path: a 1024^3 product (2.1 GFLOP) and a
// 256 MiB copy finish in well under a second each on a few cores.
const (
	calibN         = 1024
	calibCopyBytes = 256 << 20
	calibReps      = 3
)

// Calibrate measures the CPU path's ceilings with the same kernel the model
// uses (numeric.MatMulNT) and Go's copy for bandwidth. Only the CPU is
// calibrated here; GPU ceilings come from a framework backend (pytorch).
func (n *Native) Calibrate(ctx context.Context, req backend.CalibrateRequest) (backend.Calibration, error) {
	if req.Device != "cpu" && req.Device != "auto" {
		return backend.Calibration{}, fmt.Errorf("%w: %s calibrates its cpu path only, not %s", backend.ErrCannotCalibrate, Name, req.Device)
	}
	e, err := newCPUEngine()
	if err != nil {
		return backend.Calibration{}, err
	}
	cal := backend.Calibration{Device: e.Device(), MatmulTFLOPs: map[string]float64{}}
	for _, d := range req.Dtypes {
		var rate float64
		switch d {
		case "float32":
			rate = matmulRate[float32](ctx)
		case "float64":
			rate = matmulRate[float64](ctx)
		default:
			continue // the CPU path computes in float32 and float64 only
		}
		if err := ctx.Err(); err != nil {
			return backend.Calibration{}, fmt.Errorf("calibrate %s: %w", Name, err)
		}
		cal.MatmulTFLOPs[d] = rate / 1e12
	}
	src, dst := make([]byte, calibCopyBytes), make([]byte, calibCopyBytes)
	for i := range src {
		src[i] = byte(i)
	}
	// A copy reads and writes every byte: 2 * size of traffic.
	cal.CopyGBps = best(ctx, 2*calibCopyBytes, func() { copy(dst, src) }) / 1e9
	cal.Method = fmt.Sprintf("numeric.MatMulNT n=%d and copy() of %d MiB counted read+write, best of %d, wall clock", calibN, calibCopyBytes>>20, calibReps)
	return cal, nil
}

func matmulRate[T numeric.Float](ctx context.Context) float64 {
	a, bt, c := make([]T, calibN*calibN), make([]T, calibN*calibN), make([]T, calibN*calibN)
	for i := range a {
		a[i], bt[i] = T(i%7)*0.25, T(i%5)*0.5
	}
	return best(ctx, 2*float64(calibN)*calibN*calibN, func() { numeric.MatMulNT(c, a, bt, calibN, calibN, calibN) })
}

// best is work per second of the fastest of calibReps calls after one
// warm-up call: a ceiling is the best the code reaches.
func best(ctx context.Context, work float64, fn func()) float64 {
	fn()
	rate := 0.0
	for i := 0; i < calibReps && ctx.Err() == nil; i++ {
		start := time.Now()
		fn()
		rate = max(rate, work/time.Since(start).Seconds())
	}
	return rate
}
