package subprocess

import (
	"context"
	"errors"
	"fmt"

	"github.com/xbench/xbench/harness/backend"
)

var _ backend.Calibrator = (*Backend)(nil)

// Calibrate sends the optional "calibrate" op (docs/protocol.md). A program
// that predates the op answers "unknown op", and a framework without it
// "cannot calibrate"; both become backend.ErrCannotCalibrate so the harness
// reports one clear message.
func (b *Backend) Calibrate(ctx context.Context, req backend.CalibrateRequest) (backend.Calibration, error) {
	rep, err := b.call(ctx, "calibrate", req)
	if err != nil {
		if declined(rep, "cannot calibrate") {
			return backend.Calibration{}, fmt.Errorf("%w: %s", backend.ErrCannotCalibrate, rep.Error)
		}
		return backend.Calibration{}, err
	}
	if rep.Calibration == nil {
		return backend.Calibration{}, errors.New("calibrate: reply has no calibration object")
	}
	return *rep.Calibration, nil
}

var _ backend.BatchRunner = (*Backend)(nil)
