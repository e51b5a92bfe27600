package subprocess

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/xbench/xbench/harness/backend"
)

func TestCalibrate(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		cannot     bool
		wantGBps   float64
		wantDevice string
	}{
		{"answers", `    r = req["request"]
    print(json.dumps({"id": req["id"], "calibration": {"device": {"kind": r["device"], "name": "n", "count": 1},
        "matmul_tflops": {d: 1.5 for d in r["dtypes"]}, "copy_gbps": 20.0, "method": "m"}}), flush=True)
`, false, 20, "cpu"},
		{"predates the op", `    print(json.dumps({"id": req["id"], "error": "unknown op 'calibrate'; ops: info, run, export, shutdown"}), flush=True)
`, true, 0, ""},
		{"framework without it", `    print(json.dumps({"id": req["id"], "error": "backend t cannot calibrate"}), flush=True)
`, true, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(script(t, tt.body), os.Environ(), ".", &bytes.Buffer{})
			defer b.Close()
			cal, err := b.Calibrate(context.Background(), backend.CalibrateRequest{Device: "cpu", Dtypes: []string{"float32"}})
			if tt.cannot {
				if !errors.Is(err, backend.ErrCannotCalibrate) {
					t.Fatalf("error %v, want ErrCannotCalibrate", err)
				}
				return
			}
			if err != nil || cal.CopyGBps != tt.wantGBps || cal.Device.Kind != tt.wantDevice || cal.MatmulTFLOPs["float32"] != 1.5 {
				t.Fatalf("calibration %+v, %v", cal, err)
			}
		})
	}
}
