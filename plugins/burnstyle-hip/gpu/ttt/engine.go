package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Engine and Job have the method sets of the Native backend's engine and
// deviceTimedJob (plugins/burnstyle-hip/engine.go), so that backend plugs
// the GPU in with a small wrapper and this package need not import it.
type Engine struct{ d *gpu.Device }

// Job is one prepared configuration: a Model with its inputs set.
type Job struct {
	m      *Model
	first  bool
	timing string
}

// NewEngine is the engine for the shared device of kind ("cuda", "rocm").
func NewEngine(kind string) (*Engine, error) {
	d, err := gpu.Shared(kind)
	if err != nil {
		return nil, err
	}
	return &Engine{d: d}, nil
}

// EngineOn is the engine of an already opened device (tests that open
// their own; the emulator has one current context at a time).
func EngineOn(d *gpu.Device) *Engine { return &Engine{d: d} }

func (e *Engine) Device() result.Device { return e.d.Info() }

// Check declines what the GPU path does not build (dtypes other than
// float32 and bfloat16, a training step without cuBLAS or labels), shapes whose inner kernels would not fit the device's shared
// memory, and runs that would not fit its free memory.
func (e *Engine) Check(cfg ttt.Config, s ttt.Size) (result.Status, string) {
	if err := Supports(cfg); err != nil {
		return result.StatusUnsupported, fmt.Sprintf("%s (on %s)", err, e.d.Info().Name)
	}
	g, _, err := geometryFor(cfg, withEnv(Options{}), e.d.RT.Clusters())
	if err != nil {
		return result.StatusUnsupported, err.Error()
	}
	if need := g.smemBytes(); need > e.d.RT.MaxDynSmem {
		return result.StatusUnsupported, fmt.Sprintf("the %s inner kernel at f=%d needs %d bytes of shared memory per block; %s allows %d",
			cfg.TTTType, s.HeadDim, need, e.d.Info().Name, e.d.RT.MaxDynSmem)
	}
	if msg := e.trainCheck(cfg, g); msg != "" {
		return result.StatusUnsupported, msg
	}
	free, err := e.d.FreeBytes()
	if need := estimateBytes(cfg, s); err == nil && need > free*9/10 {
		return result.StatusOOM, fmt.Sprintf("needs about %.1f GiB of device memory, %.1f GiB free on %s",
			float64(need)/(1<<30), float64(free)/(1<<30), e.d.Info().Name)
	}
	return result.StatusOK, ""
}

// estimateBytes bounds a model's device memory: weights, activations and the
// cuBLAS workspace (the allocations NewModel makes, counted the same way).
func estimateBytes(cfg ttt.Config, s ttt.Size) int64 {
	a := int64(4)
	if cfg.Dtype == "bfloat16" {
		a = 2
	}
	N, C, I, V := int64(cfg.Batch)*int64(cfg.SeqLen), int64(s.Hidden), int64(s.MLP), int64(s.Vocab)
	if cfg.InnerOnly {
		return ttt.NumInnerParams(s, cfg.TTTType, cfg.MiniBatch)*4 + N*C*(4*a+4) + gpu.CublasWorkspace
	}
	params := ttt.NumParams(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone) * a
	acts := N*C*4 + N*a*(7*C+3*C+int64(s.Heads)+3*I+V) + N*int64(s.Heads)*4
	if cfg.Backward {
		acts += trainBytes(cfg, s) + mambaTrainBytes(cfg, s)
	}
	return params + acts + gpu.CublasWorkspace
}

// Prepare compiles the kernels, uploads weights and inputs.
func (e *Engine) Prepare(cfg ttt.Config, _ ttt.Size, w, in map[string]tensorfile.Tensor) (*Job, error) {
	m, err := NewModel(e.d, cfg, w)
	if err != nil {
		return nil, err
	}
	if cfg.InnerOnly {
		err = m.SetInnerInputs(in)
	} else if tok, ok := in["tokens"]; !ok {
		err = fmt.Errorf("prepare inputs: missing tensor \"tokens\"")
	} else if ids, e := tok.Int32s(); e != nil {
		err = fmt.Errorf("prepare inputs: tensor \"tokens\": %w", e)
	} else {
		err = m.SetTokens(ids)
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	dense := "cuBLAS (float32 pedantic, bf16 GemmEx with float32 accumulation)"
	if !m.useBLAS() {
		dense = "portable GEMM kernels"
	}
	launches, call := "every kernel launched from the host each call", "forward"
	if cfg.Backward {
		call = "training step (forward and backward)"
	}
	if m.Replays() {
		launches = "each call one replay of the " + call + " captured as a graph at the first call"
	}
	timing := fmt.Sprintf("(%s) %s; the first call adds NVRTC compile, module load and the capture; dense %s",
		e.d.Info().Kind, launches, dense)
	return &Job{m: m, first: true, timing: timing}, nil
}

// StepMs runs one call and returns its device-event time. The first call
// also counts the run-time compilation done in Prepare, so the protocol's
// compile_ms holds the NVRTC time as the frameworks' hold their JIT time.
func (j *Job) StepMs() (float64, error) {
	ms, err := j.m.Run()
	if j.first {
		ms += j.m.CompileMs()
		j.first = false
	}
	return ms, err
}

// Step runs one call and waits for it.
func (j *Job) Step() error { _, err := j.StepMs(); return err }

// Timing says how StepMs measures: which events the samples are (held or
// not, as the runtime's timing loop found the driver) and what a call is.
func (j *Job) Timing() string { return j.m.sampler.Clock() + " " + j.timing }

// Output is the last call's "logits" [B, L, V] or "out" [B, nh, L, f], F32.
func (j *Job) Output() (string, tensorfile.Tensor, error) {
	data, shape, err := j.m.Output()
	if err != nil {
		return "", tensorfile.Tensor{}, err
	}
	name := "logits"
	if j.m.cfg.InnerOnly {
		name = "out"
	}
	return name, tensorfile.F32(shape, data), nil
}

// MemoryBytes is the model's own count of device bytes (PeakBytes).
func (j *Job) MemoryBytes() int64 { return j.m.PeakBytes() }

// Close frees the model's device memory; the shared device stays open.
func (j *Job) Close() error {
	j.m.Close()
	return nil
}

// Phases runs one call with an event between launch groups (Model.Profile)
// and returns the device milliseconds per part, for `xbench profile`.
func (j *Job) Phases() (map[string]float64, error) { return j.m.Profile() }
