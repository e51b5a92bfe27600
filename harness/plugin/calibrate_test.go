package plugin

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// calibratingBackend is fakeBackend plus the optional capability.
type calibratingBackend struct {
	fakeBackend
	got backend.CalibrateRequest
	err error
}

func (c *calibratingBackend) Calibrate(_ context.Context, req backend.CalibrateRequest) (backend.Calibration, error) {
	c.got = req
	return backend.Calibration{Device: result.Device{Kind: "cuda", Name: "gpu", Count: 1},
		MatmulTFLOPs: map[string]float64{"float32": 51.5, "bfloat16": 700}, CopyGBps: 2900, Method: "m"}, c.err
}

func TestCalibrateOverGRPC(t *testing.T) {
	impl := &calibratingBackend{}
	b := connect(t, impl)
	cal, err := b.(backend.Calibrator).Calibrate(context.Background(), backend.CalibrateRequest{Device: "cuda", Dtypes: []string{"float32", "bfloat16"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(impl.got, backend.CalibrateRequest{Device: "cuda", Dtypes: []string{"float32", "bfloat16"}}) {
		t.Errorf("request arrived as %+v", impl.got)
	}
	want := backend.Calibration{Device: result.Device{Kind: "cuda", Name: "gpu", Count: 1},
		MatmulTFLOPs: map[string]float64{"float32": 51.5, "bfloat16": 700}, CopyGBps: 2900, Method: "m"}
	if !reflect.DeepEqual(cal, want) {
		t.Errorf("calibration %+v, want %+v", cal, want)
	}
}

func TestCalibrateUnsupported(t *testing.T) {
	for name, impl := range map[string]backend.Backend{
		"no capability": &fakeBackend{},
		"declines":      &calibratingBackend{err: backend.ErrCannotCalibrate},
	} {
		b := connect(t, impl)
		_, err := b.(backend.Calibrator).Calibrate(context.Background(), backend.CalibrateRequest{Device: "cpu"})
		if !errors.Is(err, backend.ErrCannotCalibrate) {
			t.Errorf("%s: error %v, want ErrCannotCalibrate", name, err)
		}
	}
}
