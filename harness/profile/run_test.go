package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// fakeProfiler answers Profile with rep (writing its trace when write is
// set) or err.
type fakeProfiler struct {
	backend.Backend
	rep   backend.ProfileReport
	err   error
	write bool
}

func (f *fakeProfiler) Profile(_ context.Context, req backend.ProfileRequest) (backend.ProfileReport, error) {
	if f.write {
		if err := WriteTrace(req.TracePath, []Event{{Name: "k", Ph: "X", Dur: 1}}); err != nil {
			return f.rep, err
		}
		f.rep.TracePath = req.TracePath
	}
	return f.rep, f.err
}

type plain struct{ backend.Backend }

type fakeSource struct {
	b         map[string]backend.Backend
	restarted []string
}

var ttt = backend.Capabilities{Workloads: []backend.WorkloadCaps{{Workload: "ttt", Phases: []string{"forward"}, Devices: []string{"cpu"}}}}

func (s *fakeSource) Backend(_ context.Context, name string) (backend.Backend, backend.Info, error) {
	b, ok := s.b[name]
	if !ok {
		return nil, backend.Info{}, fmt.Errorf("no backend %s", name)
	}
	return b, backend.Info{Name: name, Capabilities: ttt}, nil
}

func (s *fakeSource) Restart(name string) { s.restarted = append(s.restarted, name) }

func TestRunOutcomes(t *testing.T) {
	ok := backend.ProfileReport{Status: result.StatusOK, Device: result.Device{Kind: "cpu"}, Profiler: "fake", TimeKind: backend.TimeHost, Calls: 2, WallMs: 3,
		Kernels: []backend.KernelTime{{Name: "aten::mm", SelfMs: 2, Count: 4}}}
	src := &fakeSource{b: map[string]backend.Backend{
		"good":     &fakeProfiler{rep: ok, write: true},
		"notrace":  &fakeProfiler{rep: ok},
		"declines": &fakeProfiler{err: fmt.Errorf("%w: backend declines cannot profile", backend.ErrCannotProfile)},
		"plain":    plain{},
		"broken":   &fakeProfiler{err: errors.New("rpc error: code = Unknown desc = boom")},
		"unsup":    &fakeProfiler{rep: backend.ProfileReport{Status: result.StatusUnsupported, Message: "no gpu"}},
	}}
	cfg := result.Config{Workload: "ttt", Phase: "forward", Params: map[string]string{}}
	var out bytes.Buffer
	names := []string{"good", "notrace", "declines", "plain", "broken", "unsup", "missing"}
	outs := Run(context.Background(), src, names, Options{Device: "cpu", Config: cfg, Calls: 2, Top: 5, TraceDir: t.TempDir(), Timeout: time.Minute}, &out)
	want := map[string]string{"good": "ok", "notrace": "failed", "declines": CannotProfile, "plain": CannotProfile,
		"broken": "failed", "unsup": "unsupported", "missing": "failed"}
	for _, o := range outs {
		if o.Status != want[o.Backend] {
			t.Errorf("%s: status %s (%s), want %s", o.Backend, o.Status, o.Message, want[o.Backend])
		}
	}
	text := out.String()
	for _, w := range []string{"good on cpu: profiled (under fake), not a timing", "notrace: failed: the backend reported a profile but its trace is not usable",
		"declines cannot profile: backend declines cannot profile", "plain cannot profile: the backend has no profiler",
		"broken: failed: boom", "unsup: unsupported: no gpu", "missing: failed: start: no backend missing"} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	if strings.Join(src.restarted, ",") != "broken" {
		t.Errorf("restarted %v, want only the backend whose call failed", src.restarted)
	}
	// Outside the capabilities: answered before any profiling.
	outs = Run(context.Background(), src, []string{"good"}, Options{Device: "cuda", Config: cfg, Calls: 1, TraceDir: t.TempDir(), Timeout: time.Minute}, &out)
	if outs[0].Status != "unsupported" || !strings.Contains(outs[0].Message, "device cuda") {
		t.Errorf("cuda: %+v", outs[0])
	}
}
