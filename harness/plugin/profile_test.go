package plugin

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// profilingBackend is fakeBackend plus the optional capability.
type profilingBackend struct {
	fakeBackend
	got backend.ProfileRequest
	err error
}

var profiled = backend.ProfileReport{Status: result.StatusOK, Device: result.Device{Kind: "cuda", Name: "gpu", Count: 1},
	Profiler: "p", TimeKind: backend.TimeDevice, WallMs: 3.5, Calls: 2, TracePath: "/t/x.json",
	Kernels: []backend.KernelTime{{Name: "gemm", SelfMs: 2.25, Count: 4}, {Name: "norm", SelfMs: 0.5, Count: 8}}}

func (p *profilingBackend) Profile(_ context.Context, req backend.ProfileRequest) (backend.ProfileReport, error) {
	p.got = req
	return profiled, p.err
}

func TestProfileOverGRPC(t *testing.T) {
	impl := &profilingBackend{}
	b := connect(t, impl)
	req := backend.ProfileRequest{Workload: "ttt", Variant: "compile", Device: "cuda", Config: cfg, Calls: 2, TracePath: "/t/x.json"}
	rep, err := b.(backend.Profiler).Profile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(impl.got, req) {
		t.Errorf("request arrived as %+v, want %+v", impl.got, req)
	}
	if !reflect.DeepEqual(rep, profiled) {
		t.Errorf("report %+v, want %+v", rep, profiled)
	}
}

func TestProfileUnsupported(t *testing.T) {
	for name, impl := range map[string]backend.Backend{
		"no capability": &fakeBackend{},
		"declines":      &profilingBackend{err: backend.ErrCannotProfile},
	} {
		b := connect(t, impl)
		_, err := b.(backend.Profiler).Profile(context.Background(), backend.ProfileRequest{Device: "cpu", Config: cfg})
		if !errors.Is(err, backend.ErrCannotProfile) {
			t.Errorf("%s: error %v, want ErrCannotProfile", name, err)
		}
	}
}
