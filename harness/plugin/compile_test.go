package plugin

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// compilingBackend is fakeBackend plus the optional compile op.
type compilingBackend struct {
	fakeBackend
	got backend.RunRequest
	out backend.Compiled
	err error
}

func (c *compilingBackend) Compile(_ context.Context, req backend.RunRequest) (backend.Compiled, error) {
	c.got = req
	return c.out, c.err
}

func TestCompileOverGRPC(t *testing.T) {
	req := backend.RunRequest{Workload: "gemm", Variant: "v", Device: "cuda", Mode: result.Mode{ColdCache: true},
		Config: result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"m": "64"}, Warmup: 1, Repeats: 2}}
	for name, out := range map[string]backend.Compiled{
		"ok":     {Status: result.StatusOK, CompileMs: 812.5, Settings: map[string]string{"autotune_config": "BLOCK_M: 128"}},
		"failed": {Status: result.StatusFailed, Message: "ptxas died"},
	} {
		impl := &compilingBackend{out: out}
		got, err := connect(t, impl).(backend.Compiler).Compile(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(impl.got, req) {
			t.Errorf("%s: request arrived as %+v, want %+v", name, impl.got, req)
		}
		if out.Settings == nil {
			out.Settings = got.Settings // an empty map and none travel alike
		}
		if !reflect.DeepEqual(got, out) {
			t.Errorf("%s: compiled %+v, want %+v", name, got, out)
		}
	}
}

func TestCompileUnsupported(t *testing.T) {
	for name, impl := range map[string]backend.Backend{
		"no capability": &fakeBackend{},
		"declines":      &compilingBackend{err: backend.ErrCannotCompile},
	} {
		_, err := connect(t, impl).(backend.Compiler).Compile(context.Background(), backend.RunRequest{Device: "cpu"})
		if !errors.Is(err, backend.ErrCannotCompile) {
			t.Errorf("%s: error %v, want ErrCannotCompile", name, err)
		}
	}
}
