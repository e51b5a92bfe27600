package burnstylehip

import (
	"fmt"
	"slices"

	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	cputtt "github.com/xbench/xbench/plugins/burnstyle-hip/cpu/ttt"
)

// cpuEngine runs this backend's own TTT model (package cpu/ttt) on every
// core, at the run's precision.
type cpuEngine struct{ dev result.Device }

var _ engine = (*cpuEngine)(nil)

func newCPUEngine() (engine, error) {
	return &cpuEngine{dev: result.Device{Kind: "cpu", Name: cpuName(), Count: 1}}, nil
}

func (e *cpuEngine) Device() result.Device { return e.dev }

// Check accepts everything Native declares (the CPU path implements the
// whole capability set) as long as it fits in memory: a run that would push
// the machine into swap or the OOM killer is answered with status oom.
func (e *cpuEngine) Check(cfg ttt.Config, s ttt.Size) (result.Status, string) {
	if cfg.Dtype != "float32" && cfg.Dtype != "float64" {
		return result.StatusUnsupported, fmt.Sprintf("dtype %q is not supported on the CPU path (allowed: float32, float64)", cfg.Dtype)
	}
	if cfg.Backward && cfg.SeqLen < 2 {
		return result.StatusUnsupported, fmt.Sprintf("backward at seq_len %d: the loss has no next-token label (need seq_len >= 2)", cfg.SeqLen)
	}
	return hostFits(float64(cputtt.EstimateBytes(cfg, s)))
}

func (e *cpuEngine) Prepare(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (job, error) {
	if cfg.Dtype == "float64" {
		return prepareCPU[float64](cfg, s, w, in)
	}
	return prepareCPU[float32](cfg, s, w, in)
}

func prepareCPU[T numeric.Float](cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (job, error) {
	B, L := cfg.Batch, cfg.SeqLen
	if cfg.InnerOnly {
		p, err := cputtt.NewInner[T](s, cfg.TTTType, cfg.MiniBatch, w)
		if err != nil {
			return nil, err
		}
		j := &cpuInnerJob[T]{p: p, batch: B, seqLen: L, shape: []int{B, s.Heads, L, s.HeadDim}}
		for _, x := range []struct {
			dst   *[]T
			name  string
			shape []int
		}{
			{&j.xq, "xq", j.shape}, {&j.xk, "xk", j.shape}, {&j.xv, "xv", j.shape},
			{&j.gate, "gate", []int{B, s.Heads, L}},
		} {
			if *x.dst, err = cputtt.TensorAs[T](in, x.name, x.shape, "prepare inputs"); err != nil {
				return nil, err
			}
		}
		return j, nil
	}
	m, err := cputtt.NewModel[T](s, cfg.TTTType, backboneOf(cfg), cfg.MiniBatch, w)
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
		return newCPUTrainJob(m, cfg, s, ids), nil
	}
	return &cpuForwardJob[T]{m: m, tokens: ids, batch: B, seqLen: L}, nil
}

// cpuForwardJob is a prepared full forward pass.
type cpuForwardJob[T numeric.Float] struct {
	m             *cputtt.Model[T]
	tokens        []int32
	batch, seqLen int
	logits        []T
}

func (j *cpuForwardJob[T]) Step() (err error) {
	j.logits, err = j.m.Forward(j.tokens, j.batch, j.seqLen)
	return err
}

func (j *cpuForwardJob[T]) Output() (string, tensorfile.Tensor, error) {
	if j.logits == nil {
		return "", tensorfile.Tensor{}, fmt.Errorf("output: no forward step has run")
	}
	return "logits", pack(j.logits, []int{j.batch, j.seqLen, j.m.Size.Vocab}), nil
}

// MemoryBytes counts parameters, activations and the token ids.
func (j *cpuForwardJob[T]) MemoryBytes() int64 { return j.m.Bytes() + int64(4*len(j.tokens)) }

func (j *cpuForwardJob[T]) Close() error { j.m, j.logits = nil, nil; return nil }

// cpuInnerJob is a prepared inner-only run of layer 0's inner model.
type cpuInnerJob[T numeric.Float] struct {
	p                *cputtt.Model[T]
	xq, xk, xv, gate []T
	out              []T
	batch, seqLen    int
	shape            []int
	stepped          bool
}

func (j *cpuInnerJob[T]) Step() (err error) {
	j.out, err = j.p.InnerOnly(j.xq, j.xk, j.xv, j.gate, j.batch, j.seqLen)
	j.stepped = err == nil
	return err
}

func (j *cpuInnerJob[T]) Output() (string, tensorfile.Tensor, error) {
	if !j.stepped {
		return "", tensorfile.Tensor{}, fmt.Errorf("output: no inner-only step has run")
	}
	return "out", pack(j.out, j.shape), nil
}

// MemoryBytes counts the inner parameters, what the last call allocated
// (its output among it) and the inputs.
func (j *cpuInnerJob[T]) MemoryBytes() int64 {
	var z T
	size := int64(4)
	if _, ok := any(z).(float64); ok {
		size = 8
	}
	return j.p.Bytes() + size*int64(len(j.xq)+len(j.xk)+len(j.xv)+len(j.gate))
}

func (j *cpuInnerJob[T]) Close() error { j.p, j.out = nil, nil; return nil }

// pack stores float64 results as F64 and float32 results as F32.
func pack[T numeric.Float](v []T, shape []int) tensorfile.Tensor {
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
