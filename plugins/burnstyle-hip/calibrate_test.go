package burnstylehip

import (
	"context"
	"errors"
	"testing"

	"github.com/xbench/xbench/harness/backend"
)

func TestCalibrateCPU(t *testing.T) {
	cal, err := New().Calibrate(context.Background(), backend.CalibrateRequest{Device: "cpu", Dtypes: []string{"float32", "bfloat16", "float64"}})
	if err != nil {
		t.Fatal(err)
	}
	if cal.Device.Kind != "cpu" || cal.MatmulTFLOPs["float32"] <= 0 || cal.MatmulTFLOPs["float64"] <= 0 || cal.CopyGBps <= 0 {
		t.Errorf("calibration %+v", cal)
	}
	if _, ok := cal.MatmulTFLOPs["bfloat16"]; ok {
		t.Error("the cpu path has no bfloat16 and should not report it")
	}
	if _, err := New().Calibrate(context.Background(), backend.CalibrateRequest{Device: "cuda"}); !errors.Is(err, backend.ErrCannotCalibrate) {
		t.Errorf("cuda: %v, want ErrCannotCalibrate", err)
	}
}
