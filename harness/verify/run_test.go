package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/attention"
)

// exporter is a backend whose export writes the workload's own float64
// references as F32, optionally breaking one tensor: what a correct
// backend, or one with a wrong gradient, hands verify.
type exporter struct {
	wl     workload.Workload
	broken string // the tensor to corrupt, "" for none
}

func (e exporter) Info(context.Context) (backend.Info, error) { return backend.Info{Name: "fake"}, nil }
func (e exporter) Run(context.Context, backend.RunRequest) (result.Result, error) {
	return result.Result{}, nil
}

func (e exporter) Export(_ context.Context, req backend.ExportRequest) (backend.ExportResponse, error) {
	in, err := tensorfile.Read(req.InputsPath)
	if err != nil {
		return backend.ExportResponse{}, err
	}
	refs, err := e.wl.(workload.MultiOutput).References(req.Config, workload.Fixtures{Inputs: in})
	if err != nil {
		return backend.ExportResponse{}, err
	}
	out := map[string]tensorfile.Tensor{}
	for name, t := range refs {
		v, _ := t.Float64s()
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
			if name == e.broken {
				f[i] = -f[i]
			}
		}
		out[name] = tensorfile.F32(t.Shape, f)
	}
	return backend.ExportResponse{Status: result.StatusOK}, tensorfile.Write(req.OutputPath, out)
}

type sessionOf map[string]backend.Backend

func (s sessionOf) Backend(_ context.Context, name string) (backend.Backend, backend.Info, error) {
	caps := backend.Capabilities{Workloads: []backend.WorkloadCaps{{Workload: attention.Name,
		Phases: []string{workload.PhaseForward, workload.PhaseBackward}, Devices: []string{"cpu"}}}}
	return s[name], backend.Info{Name: name, Capabilities: caps}, nil
}
func (s sessionOf) Restart(string) {}

// verify.Run on a workload with several outputs: the backward phase grades
// out and all three gradients, so a backend whose dk alone is wrong fails.
func TestRunComparesEveryOutput(t *testing.T) {
	wl := attention.Workload{}
	cfg, err := workload.Resolve(wl, workload.PhaseBackward, wl.SmallDefaults(), 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	bs := sessionOf{"good": exporter{wl: wl}, "bad": exporter{wl: wl, broken: "dk"}}
	rows, err := Run(context.Background(), bs, Plan{Workload: wl, Config: cfg, Device: "cpu",
		Backends: []string{"good", "bad"}, Seed: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Verdict != Pass || !strings.Contains(rows[0].Message, "dv ") || rows[0].RelL2 > 1e-6 {
		t.Errorf("correct backend: %+v", rows[0])
	}
	if rows[1].Verdict != Fail || !strings.HasPrefix(rows[1].Message, "worst dk") || rows[1].RelL2 < 1.9 {
		t.Errorf("dk negated: %+v", rows[1])
	}
}
