package backend

import (
	"context"
	"errors"

	"github.com/xbench/xbench/harness/result"
)

// Calibrator is an optional capability: a backend that can measure the
// device's ceilings (peak matmul rate, copy bandwidth) with its own
// framework, so the report can put achieved rates against what the same
// software stack reaches on the bare operations. Backends that lack it
// keep working unchanged.
type Calibrator interface {
	Calibrate(ctx context.Context, req CalibrateRequest) (Calibration, error)
}

// ErrCannotCalibrate is returned (wrapped, with the backend's name) by a
// backend, or by the plugin layer for it, that has no calibration.
var ErrCannotCalibrate = errors.New("cannot calibrate")

// CalibrateRequest asks for the ceilings of one device, for each dtype.
type CalibrateRequest struct {
	Device string   `json:"device"` // auto, cpu, cuda, rocm
	Dtypes []string `json:"dtypes"`
}

// Calibration is what a backend measured. It is stored beside a run's
// results as _calibration.json.
type Calibration struct {
	Backend string        `json:"backend"`
	Device  result.Device `json:"device"`
	// MatmulTFLOPs is the best square-matmul rate per dtype, in 1e12
	// floating-point operations per second (2*n^3 per n x n product).
	MatmulTFLOPs map[string]float64 `json:"matmul_tflops"`
	// CopyGBps is device-to-device copy bandwidth in 1e9 bytes per second,
	// counting bytes read plus bytes written.
	CopyGBps float64 `json:"copy_gbps"`
	// Method says how it was measured (sizes, timer), for the reader.
	Method    string `json:"method,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
}
