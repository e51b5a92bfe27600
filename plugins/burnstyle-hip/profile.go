package burnstylehip

// `xbench profile` for the native backend: no external profiler, but its
// own phase records. On the CPU path a time.Now pair around each phase of a
// step (package cpu/ttt, only while profiling), reported as host time; on a
// GPU the device events between launch groups of gputtt.Model.Profile,
// reported as device time. Every matrix product is the one kernel "gemm"
// (cuBLAS on a GPU, the blocked Go kernel on the CPU).

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	cputtt "github.com/xbench/xbench/plugins/burnstyle-hip/cpu/ttt"
	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/profile"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

var _ backend.Profiler = (*Native)(nil)

const (
	cpuProfiler = "burnstyle-hip phase timers (time.Now around each phase of the CPU path)"
	gpuProfiler = "burnstyle-hip phase events (device events between launch groups, one stream)"
)

// phase is one part of one profiled call. A host phase has its start; a
// device phase only its duration (events give intervals, not clock times).
type phase struct {
	name  string
	start time.Time
	dur   time.Duration
}

// phaseJob is a job that can run one call with its phases recorded.
type phaseJob interface {
	profileStep() ([]phase, error)
}

var (
	_ phaseJob = cpuPhaseJob{}
	_ phaseJob = gpuPhaseJob{}
)

// Profile runs req.Calls calls of a TTT configuration with its phases
// recorded, after the first call and req.Config.Warmup calls unrecorded.
func (n *Native) Profile(ctx context.Context, req backend.ProfileRequest) (backend.ProfileReport, error) {
	rep := backend.ProfileReport{Calls: req.Calls, Device: result.Device{Kind: requestedKind(req.Device)}, Kernels: []backend.KernelTime{}}
	if req.Calls < 1 || !filepath.IsAbs(req.TracePath) {
		return rep, fmt.Errorf("profile %s: calls %d and trace path %q: need at least 1 call and an absolute path", Name, req.Calls, req.TracePath)
	}
	if msg := n.unsupported(req.Variant, req.Device, req.Config); msg != "" {
		rep.Status, rep.Message = result.StatusUnsupported, msg
		return rep, nil
	}
	if w, _ := workloadOf(req.Config.Workload); w.noProfile != "" {
		rep.Status, rep.Message = result.StatusUnsupported, w.noProfile
		return rep, nil
	}
	cfg := ttt.From(req.Config)
	s, e, status, msg := n.admit(req.Device, cfg)
	if status != result.StatusOK {
		rep.Status, rep.Message = status, msg
		return rep, nil
	}
	if err := invalid(cfg); err != nil {
		return rep, fmt.Errorf("profile %s: %w", Name, err)
	}
	rep.Device = e.Device()
	weights, inputs, _ := defaultTensors(cfg, s)
	var j job
	if err := safely(func() (err error) { j, err = e.Prepare(cfg, s, weights, inputs); return err }); err != nil {
		rep.Status, rep.Message = result.StatusFailed, "prepare: "+err.Error()
		return rep, nil
	}
	defer j.Close()
	pj, ok := asPhaseJob(j)
	if !ok {
		return rep, fmt.Errorf("profile %s: %w: the %s engine records no phases", Name, backend.ErrCannotProfile, rep.Device.Kind)
	}
	rep.Profiler, rep.TimeKind = cpuProfiler, backend.TimeHost
	if _, onGPU := pj.(gpuPhaseJob); onGPU {
		rep.Profiler, rep.TimeKind = gpuProfiler, backend.TimeDevice
	}
	// The first call (compilation on a GPU) and the warm-up, unrecorded.
	if _, _, err := timeSteps(ctx, j, cfg.Warmup, 0); err != nil {
		rep.Status, rep.Message = result.StatusFailed, err.Error()
		return rep, nil
	}
	var calls [][]phase
	start := time.Now()
	for i := 0; i < req.Calls; i++ {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("profile %s: %w", Name, err)
		}
		var ph []phase
		if err := safely(func() (err error) { ph, err = pj.profileStep(); return err }); err != nil {
			rep.Status, rep.Message = result.StatusFailed, fmt.Sprintf("profiled call %d: %v", i, err)
			return rep, nil
		}
		calls = append(calls, ph)
	}
	rep.WallMs = float64(time.Since(start).Nanoseconds()) / 1e6
	rep.Kernels = totals(calls)
	if err := profile.WriteTrace(req.TracePath, traceEvents(start, calls)); err != nil {
		return rep, fmt.Errorf("profile %s: %w", Name, err)
	}
	rep.Status, rep.TracePath = result.StatusOK, req.TracePath
	return rep, nil
}

func asPhaseJob(j job) (phaseJob, bool) {
	if g, ok := j.(*gputtt.Job); ok {
		return gpuPhaseJob{g}, true
	}
	if c, ok := j.(cputtt.Job); ok {
		return cpuPhaseJob{c}, true
	}
	pj, ok := j.(phaseJob)
	return pj, ok
}

// totals sums each phase over the calls, in order of first appearance.
func totals(calls [][]phase) []backend.KernelTime {
	var out []backend.KernelTime
	at := map[string]int{}
	for _, ph := range calls {
		for _, p := range ph {
			i, ok := at[p.name]
			if !ok {
				i, at[p.name] = len(out), len(out)
				out = append(out, backend.KernelTime{Name: p.name})
			}
			out[i].SelfMs += float64(p.dur.Nanoseconds()) / 1e6
			out[i].Count++
		}
	}
	return out
}

// traceEvents lays the phases out on one lane. Host phases sit at their
// clock times; device phases, which have durations only, are laid end to
// end from where the previous call's ended, so the trace shows each call's
// composition, not when the device ran it.
func traceEvents(origin time.Time, calls [][]phase) []profile.Event {
	var ev []profile.Event
	at := origin
	for _, ph := range calls {
		for _, p := range ph {
			if !p.start.IsZero() {
				at = p.start
			}
			ev = append(ev, profile.Span(p.name, origin, at, p.dur, 1))
			at = at.Add(p.dur)
		}
	}
	return ev
}

// cpuPhaseJob adapts a cpu/ttt job's recorded phases (host clock spans).
type cpuPhaseJob struct{ j cputtt.Job }

func (c cpuPhaseJob) profileStep() ([]phase, error) {
	spans, err := c.j.ProfileStep()
	if err != nil {
		return nil, err
	}
	out := make([]phase, len(spans))
	for i, s := range spans {
		out[i] = phase{name: s.Name, start: s.Start, dur: s.Dur}
	}
	return out, nil
}

// gpuPhaseJob adapts gputtt.Job's per-part device milliseconds.
type gpuPhaseJob struct{ j *gputtt.Job }

func (g gpuPhaseJob) profileStep() ([]phase, error) {
	parts, err := g.j.Phases()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]phase, 0, len(names))
	for _, n := range names {
		out = append(out, phase{name: n, dur: time.Duration(parts[n] * 1e6)})
	}
	return out, nil
}
