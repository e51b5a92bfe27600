package verify

// The orchestration of `xbench verify`: fixtures written once, the float64
// reference, then every backend's export graded against it. The CLI only
// parses flags and prints; this file decides what a verdict is.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// Backends is what verification needs of a session: started backends, and
// a way to restart one that broke.
type Backends interface {
	Backend(ctx context.Context, name string) (backend.Backend, backend.Info, error)
	Restart(name string)
}

// Plan is one verification: a workload configuration on a device, checked
// for each named backend (or variant) against the float64 reference.
type Plan struct {
	Workload workload.Workload
	Config   result.Config
	Device   string
	Backends []string
	Seed     int64
	Dir      string // fixtures and outputs are written here
	// Progress, when set, is told before each backend runs.
	Progress func(i, n int, name string)
}

// Files are where the weights ("" when the workload has none) and inputs were written.
type Files struct{ Weights, Inputs string }

// Run writes the fixtures, computes the reference and grades every backend.
// An error means no verdict could be reached for any backend (fixtures or
// reference failed); a backend's own failure is its row's verdict.
func Run(ctx context.Context, bs Backends, p Plan) ([]Row, error) {
	fx, files, err := WriteFixtures(p.Workload, p.Dir, p.Config, p.Seed)
	if err != nil {
		return nil, err
	}
	want, err := reference(ctx, bs, p.Workload, p.Config, fx, files, p.Dir)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for i, name := range p.Backends {
		if p.Progress != nil {
			p.Progress(i, len(p.Backends), name)
		}
		rows = append(rows, one(ctx, bs, p.Workload, name, p.Device, p.Config, files, p.Dir, want))
	}
	return rows, nil
}

// WriteFixtures writes the workload's deterministic weights and inputs.
func WriteFixtures(wl workload.Workload, dir string, cfg result.Config, seed int64) (workload.Fixtures, Files, error) {
	fx, err := wl.Fixtures(cfg, seed)
	if err != nil {
		return fx, Files{}, fmt.Errorf("make %s fixtures: %w", wl.Name(), err)
	}
	files := Files{Inputs: filepath.Join(dir, "inputs.safetensors")}
	if len(fx.Weights) > 0 {
		files.Weights = filepath.Join(dir, "weights.safetensors")
		if err := tensorfile.Write(files.Weights, fx.Weights); err != nil {
			return fx, files, err
		}
	}
	return fx, files, tensorfile.Write(files.Inputs, fx.Inputs)
}

// reference is the float64 tensors every backend is graded against, by
// name (workload.OutputsOf): computed by the workload in-process, or, for a
// problem set whose reference is its own Python code, its reference
// backend's float64 export on the CPU.
func reference(ctx context.Context, bs Backends, wl workload.Workload, cfg result.Config, fx workload.Fixtures, files Files, dir string) (map[string]tensorfile.Tensor, error) {
	out := filepath.Join(dir, "reference-float64.safetensors")
	name := workload.ReferenceBackendOf(wl)
	if name == "" {
		want, err := harnessReference(wl, cfg, fx)
		if err != nil {
			return nil, err
		}
		// kept beside the backends' outputs, as a reference backend's export is
		if err := tensorfile.Write(out, want); err != nil {
			return nil, fmt.Errorf("%s reference: %w", wl.Name(), err)
		}
		return want, nil
	}
	refCfg := cfg.With("dtype", "float64")
	b, _, err := bs.Backend(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reference %s float64: %w", name, err)
	}
	resp, err := b.Export(ctx, exportRequest("", "cpu", refCfg, files, out))
	if err != nil {
		return nil, fmt.Errorf("reference %s float64: %w", name, err)
	}
	if resp.Status != result.StatusOK {
		return nil, fmt.Errorf("reference %s float64: %s: %s", name, resp.Status, resp.Message)
	}
	m, err := tensorfile.Read(out)
	if err != nil {
		return nil, err
	}
	want := map[string]tensorfile.Tensor{}
	for _, o := range workload.OutputsOf(wl, cfg) {
		t, ok := m[o]
		if !ok {
			return nil, fmt.Errorf("reference %s: %s has no tensor %q", name, out, o)
		}
		want[o] = t
	}
	return want, nil
}

// harnessReference is the workload's own float64 computation.
func harnessReference(wl workload.Workload, cfg result.Config, fx workload.Fixtures) (map[string]tensorfile.Tensor, error) {
	if m, ok := wl.(workload.MultiOutput); ok {
		ts, err := m.References(cfg, fx)
		if err != nil {
			return nil, fmt.Errorf("%s reference: %w", wl.Name(), err)
		}
		return ts, nil
	}
	r, ok := wl.(workload.Referencer)
	if !ok {
		return nil, fmt.Errorf("%s reference: the workload computes none (it implements neither workload.Referencer nor workload.MultiOutput)", wl.Name())
	}
	t, err := r.Reference(cfg, fx)
	if err != nil {
		return nil, fmt.Errorf("%s reference: %w", wl.Name(), err)
	}
	return map[string]tensorfile.Tensor{wl.Output(cfg): t}, nil
}

func exportRequest(variant, device string, cfg result.Config, files Files, out string) backend.ExportRequest {
	return backend.ExportRequest{Workload: cfg.Workload, Variant: variant, Device: device, Config: cfg,
		WeightsPath: files.Weights, InputsPath: files.Inputs, OutputPath: out}
}

// one grades one backend: unsupported when its capabilities or its answer
// say so, error when it broke, else pass or FAIL by the workload's tolerance.
func one(ctx context.Context, bs Backends, wl workload.Workload, full, device string, cfg result.Config, files Files, dir string, want map[string]tensorfile.Tensor) Row {
	row := Row{Backend: full, Device: device, Dtype: cfg.Dtype(), Tolerance: wl.Tolerance(cfg)}
	name, variant := backend.SplitName(full)
	b, info, err := bs.Backend(ctx, name)
	if err != nil {
		row.Verdict, row.Message = Error, backend.ErrorText(err)
		return row
	}
	if caps, err := info.CapabilitiesOf(variant); err == nil {
		if why := caps.Unsupported(device, cfg); why != "" {
			row.Verdict, row.Message = Unsupported, why
			return row
		}
	}
	out := filepath.Join(dir, strings.ReplaceAll(full, "/", "+")+".safetensors")
	resp, err := b.Export(ctx, exportRequest(variant, device, cfg, files, out))
	if err != nil {
		bs.Restart(name)
		row.Verdict, row.Message = Error, backend.ErrorText(err)
		return row
	}
	row.Device = resp.Device.Kind
	if resp.Device.Name != "" {
		row.Device += " (" + resp.Device.Name + ")"
	}
	if resp.Status != result.StatusOK {
		row.Verdict, row.Message = Unsupported, resp.Message
		if resp.Status != result.StatusUnsupported {
			row.Verdict = Error
		}
		return row
	}
	return CheckAll(row, out, workload.OutputsOf(wl, cfg), want)
}
