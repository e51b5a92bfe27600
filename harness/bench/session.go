// Package bench runs configurations on backends. A Session keeps one plugin
// process per backend for its whole life, so a sweep pays imports and
// compilation once, and finalizes every result the same way.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/plugin"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
)

// Session owns the backend processes of one invocation.
type Session struct {
	reg   *registry.Registry
	env   []string // extra environment for plugin processes (GPU pinning)
	RunID string
	Meta  Meta
	// Mode is how every configuration of the session is timed (cold
	// cache, CUDA graph); the zero Mode is warm and eager.
	Mode result.Mode
	// StartTimeout, when positive, bounds a backend's start (its process,
	// imports and Info) on its own, and a cell's timeout covers only its
	// run; zero keeps one deadline per cell, starting the backend included.
	StartTimeout time.Duration
	// OnStart, when set, hears how long each backend process took to start
	// and answer Info: the fixed cost a long-lived process pays only once.
	OnStart func(name string, took time.Duration)
	mu      sync.Mutex
	started map[string]*started
}

type started struct {
	proc *plugin.Process
	info backend.Info
}

// Meta is what the harness adds to every result.
type Meta struct {
	GitCommit      string
	Host           string
	NixRev         string
	VisibleDevices string
	// Settings are recorded in every result's env.settings (the ROCm
	// settings `xbench problems` starts backends with).
	Settings map[string]string
}

// NewSession prepares a session; backends start on first use.
func NewSession(reg *registry.Registry, runID string, meta Meta, extraEnv []string) *Session {
	if meta.VisibleDevices == "" {
		meta.VisibleDevices = visibleDevices(extraEnv)
	}
	return &Session{reg: reg, env: extraEnv, RunID: runID, Meta: meta, started: map[string]*started{}}
}

// visibleDevices is the GPU pinning the backends get: the session's own
// (sweep --gpus) before the process's.
func visibleDevices(extraEnv []string) string {
	for _, key := range []string{"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"} {
		for _, kv := range extraEnv {
			if v, ok := strings.CutPrefix(kv, key+"="); ok {
				return v
			}
		}
		if v := os.Getenv(key); v != "" {
			return v
		}
	}
	return ""
}

// Backend returns the running backend (starting it if needed) and its info.
// ctx bounds the start and the Info call (a backend that hangs while
// importing its framework is killed when ctx ends); the process itself
// lives until Restart or Close, not until ctx ends.
func (s *Session) Backend(ctx context.Context, name string) (backend.Backend, backend.Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.started[name]; ok && !st.proc.Exited() {
		return st.proc.Backend, st.info, nil
	}
	t0 := time.Now()
	proc, err := s.reg.Start(context.WithoutCancel(ctx), name, s.env)
	if err != nil {
		return nil, backend.Info{}, err
	}
	info, err := proc.Backend.Info(ctx)
	if err != nil {
		proc.Close()
		return nil, backend.Info{}, fmt.Errorf("backend %q info: %w", name, err)
	}
	s.started[name] = &started{proc: proc, info: info}
	if s.OnStart != nil {
		s.OnStart(name, time.Since(t0))
	}
	return proc.Backend, info, nil
}

// Restart kills a backend's process; the next call starts a fresh one.
func (s *Session) Restart(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.started[name]; ok {
		st.proc.Close()
		delete(s.started, name)
	}
}

// processPerCell says whether name's manifest asks for a fresh process
// for each cell (manifest.Manifest.ProcessPerCell).
func (s *Session) processPerCell(name string) bool {
	if s.reg == nil {
		return false
	}
	m, ok := s.reg.Manifest(name)
	return ok && m.ProcessPerCell
}

// Close stops every backend process.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, st := range s.started {
		st.proc.Close()
		delete(s.started, name)
	}
}

// Run times one configuration on one backend (or variant, "name/variant").
// It always returns a finalized result; errors become failed results, a
// timeout a timeout result (and a restarted backend).
func (s *Session) Run(ctx context.Context, fullName, device string, cfg result.Config, timeout time.Duration) result.Result {
	name, variant := backend.SplitName(fullName)
	base := result.Result{Backend: fullName, Config: cfg, Device: result.Device{Kind: deviceKind(device)}, Mode: s.Mode}
	perCell := s.processPerCell(name)
	if perCell {
		// Whatever the cell's code did to its process ends with it; the
		// next cell starts a fresh one.
		defer s.Restart(name)
	}
	if st, msg := s.startBounded(ctx, name); st != "" {
		base.Status, base.Message = st, msg
		return s.Finalize(base)
	}
	// One deadline for the whole cell, starting the backend included
	// unless StartTimeout bounded that above.
	runCtx, cancel := cellContext(ctx, timeout)
	defer cancel()
	b, info, err := s.Backend(runCtx, name)
	if err != nil {
		base.Status, base.Message = startFailure(runCtx, err, timeout)
		return s.Finalize(base)
	}
	if why := refusal(info, fullName, device, cfg); why != "" {
		base.Status, base.Message = result.StatusUnsupported, why
		return s.Finalize(base)
	}
	req := backend.RunRequest{Workload: cfg.Workload, Variant: variant, Device: device, Config: cfg, Mode: s.Mode}
	res, err := b.Run(runCtx, req)
	switch {
	case err == nil:
	case timedOut(runCtx, err):
		s.Restart(name)
		base.Status, base.Message = result.StatusTimeout, fmt.Sprintf("no result within --timeout %s; the backend process was killed and will be restarted", timeout)
		return s.Finalize(base)
	default:
		s.Restart(name)
		base.Status, base.Message = result.StatusFailed, backend.ErrorText(err)
		return s.Finalize(base)
	}
	res = s.answered(base, res)
	if perCell {
		res = s.outsideCheck(runCtx, b, req, res)
	}
	if res.Status == result.StatusOOM {
		// Whatever the cell left allocated (a caching allocator, a
		// reference an error kept) goes with the process: the next
		// configuration starts with all the memory there is.
		s.Restart(name)
	}
	return res
}

// startBounded starts name's process under --start-timeout when one is
// set: a framework import is not part of a configuration's time, so it gets
// its own bound, and the cell's deadline starts after it. It returns the
// status and message of a start that failed, or "" (also without a bound:
// the start then counts against the cell's own deadline).
func (s *Session) startBounded(ctx context.Context, name string) (result.Status, string) {
	if s.StartTimeout <= 0 {
		return "", ""
	}
	sctx, cancel := context.WithTimeout(ctx, s.StartTimeout)
	defer cancel()
	if _, _, err := s.Backend(sctx, name); err != nil {
		if timedOut(sctx, err) {
			return result.StatusTimeout, fmt.Sprintf("backend did not start within --start-timeout %s: %v", s.StartTimeout, err)
		}
		return result.StatusFailed, backend.ErrorText(err)
	}
	return "", ""
}

// refusal is why the backend (or variant) fullName cannot run cfg on
// device by its declared capabilities, or "" when it can.
func refusal(info backend.Info, fullName, device string, cfg result.Config) string {
	_, variant := backend.SplitName(fullName)
	caps, err := info.CapabilitiesOf(variant)
	if err != nil {
		return backend.ErrorText(err)
	}
	if why := caps.Unsupported(device, cfg); why != "" {
		return fullName + ": " + why
	}
	return ""
}

// answered finalizes the result a backend gave for the request base
// stands for (its backend, configuration, device and mode): the name and
// configuration asked for are the ones recorded, and an ok result timed in
// another mode than asked is refused.
func (s *Session) answered(base, res result.Result) result.Result {
	res.Backend = base.Backend
	res.Config = base.Config
	if res.Mode != s.Mode && res.Status == result.StatusOK {
		// Trust but check: a backend that ignored the mode timed something
		// else than was asked, and its numbers must not pass for it.
		res.Status, res.Message, res.SamplesMs = result.StatusFailed, fmt.Sprintf(
			"%s was asked to time in mode %s but its result says %s (a backend that cannot honour a mode answers unsupported)",
			base.Backend, s.Mode, res.Mode), nil
	}
	res.Mode = s.Mode
	if res.Device.Kind == "" {
		res.Device.Kind = base.Device.Kind
	}
	return s.Finalize(res)
}

// cellContext is ctx with the cell's deadline, or ctx itself without one.
func cellContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return ctx, func() {}
}

// startFailure is the status and message of a backend that did not start
// for a cell: a timeout when the cell's deadline passed, else failed.
func startFailure(ctx context.Context, err error, timeout time.Duration) (result.Status, string) {
	if timedOut(ctx, err) {
		return result.StatusTimeout, fmt.Sprintf("backend did not start within --timeout %s: %v", timeout, err)
	}
	return result.StatusFailed, backend.ErrorText(err)
}

// timedOut says whether a call failed because the cell's deadline passed.
// The deadline travels to the plugin with the gRPC call, and the plugin's
// side can expire a moment before ours, so its DeadlineExceeded status
// counts even while ctx.Err() is still nil.
func timedOut(ctx context.Context, err error) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

func deviceKind(device string) string {
	if device == "cuda" || device == "rocm" {
		return device
	}
	return "cpu"
}
