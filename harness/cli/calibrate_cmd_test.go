package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// plainBackend has no calibration; calibrating embeds it and adds one.
type plainBackend struct{ backend.Backend }

type calibrating struct {
	plainBackend
	got backend.CalibrateRequest
	cal backend.Calibration
	err error
}

func (c *calibrating) Calibrate(_ context.Context, req backend.CalibrateRequest) (backend.Calibration, error) {
	c.got = req
	return c.cal, c.err
}

func TestCalibrateThrough(t *testing.T) {
	dir := t.TempDir()
	fake := &calibrating{cal: backend.Calibration{Device: result.Device{Kind: "cuda", Name: "NVIDIA H100", Count: 1},
		MatmulTFLOPs: map[string]float64{"float32": 51.2, "bfloat16": 702}, CopyGBps: 2870, Method: "8192^3 matmul"}}
	req := backend.CalibrateRequest{Device: "cuda", Dtypes: []string{"float32", "bfloat16"}}
	var out bytes.Buffer
	path, err := calibrateThrough(context.Background(), fake, "pytorch", req, dir, "run-7", &out)
	if err != nil {
		t.Fatal(err)
	}
	if fake.got.Device != "cuda" || len(fake.got.Dtypes) != 2 {
		t.Errorf("backend was asked %+v", fake.got)
	}
	raw, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, "run-7/_calibration.json") {
		t.Fatalf("%s: %v", path, err)
	}
	var got backend.Calibration
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Backend != "pytorch" || got.RunID != "run-7" || got.Timestamp == "" || got.MatmulTFLOPs["bfloat16"] != 702 || got.CopyGBps != 2870 {
		t.Errorf("stored %+v", got)
	}
	for _, want := range []string{"cuda (NVIDIA H100)", "matmul bfloat16        702 TFLOP/s", "device-to-device copy  2870 GB/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	for name, b := range map[string]backend.Backend{
		"no capability": plainBackend{},
		"declines":      &calibrating{err: backend.ErrCannotCalibrate},
	} {
		_, err := calibrateThrough(context.Background(), b, "burnstyle-hip", req, dir, "run-8", &out)
		if ExitCode(err) != 1 || !strings.Contains(err.Error(), "backend burnstyle-hip cannot calibrate") {
			t.Errorf("%s: exit %d, %v", name, ExitCode(err), err)
		}
	}
	if _, err := os.Stat(dir + "/run-8"); !os.IsNotExist(err) {
		t.Error("a failed calibration left a file behind")
	}
}

func TestCalibrateUsage(t *testing.T) {
	for _, args := range [][]string{{"--dtypes", "int8"}, {"--device", "tpu"}, {"--backends", "a,b"}, {"extra"}} {
		if _, _, code, err := runApp(t, append([]string{"calibrate"}, args...)...); code != 2 {
			t.Errorf("calibrate %v: exit %d (%v), want 2", args, code, err)
		}
	}
}
