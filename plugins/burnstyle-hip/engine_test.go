package burnstylehip

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// fakeGPU stands in for a GPU engine: it proves that registering one more
// engine is all a device needs, and that device-timed steps are used as is.
type fakeGPU struct{ only string }

func (fakeGPU) Device() result.Device { return result.Device{Kind: "cuda", Name: "fake", Count: 1} }

func (g fakeGPU) Check(cfg ttt.Config, _ ttt.Size) (result.Status, string) {
	// A GPU that declines mamba (the real one declined it before it built its
	// forward, and declines its training step), for the fall-back rules.
	if cfg.Backward || cfg.Backbone == "mamba" {
		return result.StatusUnsupported, "phase " + cfg.Phase() + " with backbone " + cfg.Backbone + " is not built on fake"
	}
	if cfg.Dtype != g.only {
		return result.StatusUnsupported, "dtype " + cfg.Dtype + " is not supported on fake (allowed: " + g.only + ")"
	}
	return result.StatusOK, ""
}

func (fakeGPU) Prepare(ttt.Config, ttt.Size, map[string]tensorfile.Tensor, map[string]tensorfile.Tensor) (job, error) {
	return &fakeJob{}, nil
}

type fakeJob struct{ steps int }

func (j *fakeJob) Step() error              { j.steps++; return nil }
func (j *fakeJob) StepMs() (float64, error) { j.steps++; return float64(j.steps), nil }
func (j *fakeJob) Timing() string           { return "device events" }
func (j *fakeJob) MemoryBytes() int64       { return 42 }
func (j *fakeJob) Close() error             { return nil }
func (j *fakeJob) Output() (string, tensorfile.Tensor, error) {
	return "", tensorfile.Tensor{}, errors.New("not used")
}

func TestEngineSeam(t *testing.T) {
	n := New()
	n.engines["cuda"] = func() (engine, error) { return fakeGPU{only: "float32"}, nil }
	info, _ := n.Info(context.Background())
	if len(info.Capabilities.Workloads) == 0 || info.Capabilities.Workloads[0].Workload != "ttt" ||
		!slices.Equal(info.Capabilities.Workloads[0].Devices, []string{"cpu", "cuda", "rocm"}) {
		t.Fatalf("capabilities %+v", info.Capabilities)
	}
	tests := []struct {
		device, dtype, backbone string
		phase                   string // "" is forward
		wantStatus              result.Status
		wantKind                string
		wantSamples             []float64
		wantMsg                 string
	}{
		{"cuda", "float32", "transformer", "", result.StatusOK, "cuda", []float64{3, 4, 5}, ""}, // steps 1 and 2: compile, warmup
		{"auto", "float32", "transformer", "", result.StatusOK, "cuda", []float64{3, 4, 5}, ""},
		{"cuda", "float64", "transformer", "", result.StatusUnsupported, "cuda", nil, "dtype float64"},
		{"auto", "float64", "transformer", "", result.StatusOK, "cpu", nil, ""}, // the GPU declines, the CPU runs it
		{"cpu", "float32", "transformer", "", result.StatusOK, "cpu", nil, ""},
		// A GPU machine's timed mamba run is the GPU's to answer, never the CPU's in its place.
		{"cuda", "float32", "mamba", "", result.StatusUnsupported, "cuda", nil, "not built on fake"},
		{"auto", "float32", "mamba", "", result.StatusUnsupported, "cpu", nil, "--device cpu runs it"},
		{"auto", "float64", "mamba", "", result.StatusOK, "cpu", nil, ""},
		{"cpu", "float32", "mamba", "", result.StatusOK, "cpu", nil, ""},
		// Likewise the training step.
		{"cuda", "float32", "transformer", "backward", result.StatusUnsupported, "cuda", nil, "not built on fake"},
		{"auto", "float32", "transformer", "backward", result.StatusUnsupported, "cpu", nil, "--device cpu runs it"},
		{"cpu", "float32", "transformer", "backward", result.StatusOK, "cpu", nil, ""},
	}
	for _, tc := range tests {
		cfg := tinyConfig().With("dtype", tc.dtype).With("backbone", tc.backbone)
		if tc.phase != "" {
			cfg.Phase = tc.phase
		}
		res, err := n.Run(context.Background(), backend.RunRequest{Device: tc.device, Config: cfg})
		if err != nil || res.Status != tc.wantStatus || res.Device.Kind != tc.wantKind || !strings.Contains(res.Message, tc.wantMsg) {
			t.Errorf("%s/%s/%s/%s: status %q (%s), device %+v, err %v", tc.device, tc.dtype, tc.backbone, tc.phase, res.Status, res.Message, res.Device, err)
			continue
		}
		if tc.wantSamples != nil && (!slices.Equal(res.SamplesMs, tc.wantSamples) || res.CompileMs != 1 || res.Env.Timing != "device events" || res.PeakMemoryBytes != 42) {
			t.Errorf("%s: samples %v, compile %g, timing %q, peak %d", tc.device, res.SamplesMs, res.CompileMs, res.Env.Timing, res.PeakMemoryBytes)
		}
	}
}
