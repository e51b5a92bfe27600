package plugin

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// burstingBackend is fakeBackend plus the optional burst op.
type burstingBackend struct {
	fakeBackend
	got backend.BurstRequest
	out backend.BurstReport
	err error
}

func (b *burstingBackend) Burst(_ context.Context, req backend.BurstRequest) (backend.BurstReport, error) {
	b.got = req
	return b.out, b.err
}

func TestBurstOverGRPC(t *testing.T) {
	req := backend.BurstRequest{Calls: 640, Rounds: 5, Limit: 2500 * time.Millisecond, Run: backend.RunRequest{Workload: "problem", Device: "cpu",
		Config: result.Config{Workload: "problem", Phase: "forward", Params: map[string]string{"level": "1"}, Warmup: 1, Repeats: 2}}}
	for name, out := range map[string]backend.BurstReport{
		"ok":         {Status: result.StatusOK, Calls: 640, WallMs: 301.25},
		"failed":     {Status: result.StatusFailed, Message: "incorrect: max abs err 3"},
		"unfinished": {Status: result.StatusOK, Calls: 640, WallMs: 2500.5, Unfinished: true},
	} {
		impl := &burstingBackend{out: out}
		got, err := connect(t, impl).(backend.Burster).Burst(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(impl.got, req) {
			t.Errorf("%s: request arrived as %+v, want %+v", name, impl.got, req)
		}
		if !reflect.DeepEqual(got, out) {
			t.Errorf("%s: report %+v, want %+v", name, got, out)
		}
	}
}

func TestBurstUnsupported(t *testing.T) {
	for name, impl := range map[string]backend.Backend{
		"no capability": &fakeBackend{},
		"declines":      &burstingBackend{err: backend.ErrCannotBurst},
	} {
		_, err := connect(t, impl).(backend.Burster).Burst(context.Background(), backend.BurstRequest{Calls: 1})
		if !errors.Is(err, backend.ErrCannotBurst) {
			t.Errorf("%s: error %v, want ErrCannotBurst", name, err)
		}
	}
}
