package ttt

import (
	"fmt"
	"slices"
	"time"

	"github.com/xbench/xbench/harness/profile"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/host"
)

// Engine is burnstyle-hip's CPU engine for the ttt workload: this
// package's model on every core, at the run's precision. Its methods are
// the backend's engine seam (package burnstylehip, engine.go).
type Engine struct{ dev result.Device }

// Job is one prepared configuration: the seam's job, plus the call with its
// phases recorded (xbench profile).
type Job interface {
	Step() error
	Output() (name string, t tensorfile.Tensor, err error)
	MemoryBytes() int64
	Close() error
	ProfileStep() ([]profile.PhaseSpan, error)
}

// NewEngine is the engine of this host's CPU.
func NewEngine() *Engine {
	return &Engine{dev: host.CPUDevice()}
}

// Device is the host's CPU.
func (e *Engine) Device() result.Device { return e.dev }

// Check accepts everything Native declares (the CPU path implements the
// whole capability set) as long as it fits in memory: a run that would push
// the machine into swap or the OOM killer is answered with status oom.
func (e *Engine) Check(cfg ttt.Config, s ttt.Size) (result.Status, string) {
	if cfg.Dtype != "float32" && cfg.Dtype != "float64" {
		return result.StatusUnsupported, fmt.Sprintf("dtype %q is not supported on the CPU path (allowed: float32, float64)", cfg.Dtype)
	}
	if cfg.Backward && cfg.SeqLen < 2 {
		return result.StatusUnsupported, fmt.Sprintf("backward at seq_len %d: the loss has no next-token label (need seq_len >= 2)", cfg.SeqLen)
	}
	return host.Fits(float64(EstimateBytes(cfg, s)))
}

// Prepare loads weights and inputs at cfg.Dtype into a job ready to step.
func (e *Engine) Prepare(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (Job, error) {
	if cfg.Dtype == "float64" {
		return prepare[float64](cfg, s, w, in)
	}
	return prepare[float32](cfg, s, w, in)
}

func prepare[T Float](cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (Job, error) {
	B, L := cfg.Batch, cfg.SeqLen
	if cfg.InnerOnly {
		p, err := NewInner[T](s, cfg.TTTType, cfg.MiniBatch, w)
		if err != nil {
			return nil, err
		}
		j := &innerJob[T]{p: p, batch: B, seqLen: L, shape: []int{B, s.Heads, L, s.HeadDim}}
		for _, x := range []struct {
			dst   *[]T
			name  string
			shape []int
		}{
			{&j.xq, "xq", j.shape}, {&j.xk, "xk", j.shape}, {&j.xv, "xv", j.shape},
			{&j.gate, "gate", []int{B, s.Heads, L}},
		} {
			if *x.dst, err = TensorAs[T](in, x.name, x.shape, "prepare inputs"); err != nil {
				return nil, err
			}
		}
		return j, nil
	}
	m, err := NewModel[T](s, cfg.TTTType, cfg.Backbone, cfg.MiniBatch, w)
	if err != nil {
		return nil, err
	}
	tok, ok := in["tokens"]
	if !ok {
		return nil, fmt.Errorf("prepare inputs: missing tensor \"tokens\"")
	}
	if !slices.Equal(tok.Shape, []int{B, L}) {
		return nil, fmt.Errorf("prepare inputs: tensor \"tokens\" has shape %v, want [%d %d]", tok.Shape, B, L)
	}
	ids, err := tok.Int32s()
	if err != nil {
		return nil, fmt.Errorf("prepare inputs: tensor \"tokens\": %w", err)
	}
	if cfg.Backward {
		return newTrainJob(m, cfg, s, ids), nil
	}
	return &forwardJob[T]{m: m, tokens: ids, batch: B, seqLen: L}, nil
}

// forwardJob is a prepared full forward pass.
type forwardJob[T Float] struct {
	m             *Model[T]
	tokens        []int32
	batch, seqLen int
	logits        []T
}

func (j *forwardJob[T]) Step() (err error) {
	j.logits, err = j.m.Forward(j.tokens, j.batch, j.seqLen)
	return err
}

func (j *forwardJob[T]) Output() (string, tensorfile.Tensor, error) {
	if j.logits == nil {
		return "", tensorfile.Tensor{}, fmt.Errorf("output: no forward step has run")
	}
	return "logits", pack(j.logits, []int{j.batch, j.seqLen, j.m.Size.Vocab}), nil
}

// MemoryBytes counts parameters, activations and the token ids.
func (j *forwardJob[T]) MemoryBytes() int64 { return j.m.Bytes() + int64(4*len(j.tokens)) }

func (j *forwardJob[T]) Close() error { j.m, j.logits = nil, nil; return nil }

// innerJob is a prepared inner-only run of layer 0's inner model.
type innerJob[T Float] struct {
	p                *Model[T]
	xq, xk, xv, gate []T
	out              []T
	batch, seqLen    int
	shape            []int
	stepped          bool
}

func (j *innerJob[T]) Step() (err error) {
	j.out, err = j.p.InnerOnly(j.xq, j.xk, j.xv, j.gate, j.batch, j.seqLen)
	j.stepped = err == nil
	return err
}

func (j *innerJob[T]) Output() (string, tensorfile.Tensor, error) {
	if !j.stepped {
		return "", tensorfile.Tensor{}, fmt.Errorf("output: no inner-only step has run")
	}
	return "out", pack(j.out, j.shape), nil
}

// MemoryBytes counts the inner parameters, what the last call allocated
// (its output among it) and the inputs.
func (j *innerJob[T]) MemoryBytes() int64 {
	var z T
	size := int64(4)
	if _, ok := any(z).(float64); ok {
		size = 8
	}
	return j.p.Bytes() + size*int64(len(j.xq)+len(j.xk)+len(j.xv)+len(j.gate))
}

func (j *innerJob[T]) Close() error { j.p, j.out = nil, nil; return nil }

// pack stores float64 results as F64 and float32 results as F32.
func pack[T Float](v []T, shape []int) tensorfile.Tensor {
	switch x := any(v).(type) {
	case []float64:
		return tensorfile.F64(shape, x)
	case []float32:
		return tensorfile.F32(shape, x)
	}
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return tensorfile.F64(shape, f)
}

// ProfileStep of a forward records its phases (graph.go's names).
func (j *forwardJob[T]) ProfileStep() ([]profile.PhaseSpan, error) { return recordPhases(j.m, j.Step) }

// ProfileStep of a training step records the forward's phases and the
// backward as one.
func (j *trainJob[T]) ProfileStep() ([]profile.PhaseSpan, error) { return recordPhases(j.m, j.Step) }

// recordPhases runs step with m's phase record on and returns its phases.
func recordPhases[T Float](m *Model[T], step func() error) ([]profile.PhaseSpan, error) {
	m.Phases = &profile.Phases{}
	defer func() { m.Phases = nil }()
	if err := step(); err != nil {
		return nil, err
	}
	return m.Phases.Spans, nil
}

// ProfileStep of an inner-only job is one phase: the whole call is the
// inner loop.
func (j *innerJob[T]) ProfileStep() ([]profile.PhaseSpan, error) {
	start := time.Now()
	err := j.Step()
	return []profile.PhaseSpan{{Name: "ttt_inner", Start: start, Dur: time.Since(start)}}, err
}
