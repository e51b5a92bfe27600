package burnstylehip

import (
	"fmt"
	"slices"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/harness/workload/ttt/reference"
)

// cpuEngine runs the harness's TTT reference model (package reference) on
// every core, at the run's precision.
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
	return hostFits(float64(estimateCPUBytes(cfg, s)))
}

// estimateCPUBytes bounds what a run holds at once: the generated F32
// weight tensors, the model's copy at the run's precision (plus one matrix
// being transposed), the activations of one forward and the inputs.
func estimateCPUBytes(cfg ttt.Config, s ttt.Size) int64 {
	elem := int64(4)
	if cfg.Dtype == "float64" {
		elem = 8
	}
	tokens := int64(cfg.Batch) * int64(cfg.SeqLen)
	if cfg.InnerOnly {
		p := ttt.NumInnerParams(s, cfg.TTTType, cfg.MiniBatch)
		return p*(4+elem) + 5*tokens*int64(s.Hidden)*(4+elem)
	}
	p := ttt.NumParams(s, cfg.TTTType, cfg.MiniBatch, backboneOf(cfg))
	biggest := int64(s.Vocab) * int64(s.Hidden)
	rowsC := int64(12) // cpu.newActs's [tokens, C] buffers and h
	if backboneOf(cfg) == "mamba" {
		rowsC += 3
	}
	acts := tokens * (rowsC*int64(s.Hidden) + int64(2*s.Heads+2*s.MLP+s.Vocab))
	if cfg.Backward {
		acts += tokens * trainRowElems(s, backboneOf(cfg) == "mamba")
		p *= 2 // the gradients, and the projections again in [in, out] for the backward
	}
	return p*(4+elem) + 2*biggest*elem + acts*elem
}

// trainRowElems is what the training step holds per token beyond a
// forward's buffers (package reference's tape): every layer's kept activations,
// the backward's buffers (two [tokens, V] among them) and the final norm's.
func trainRowElems(s ttt.Size, mamba bool) int64 {
	C, I, nh, V := int64(s.Hidden), int64(s.MLP), int64(s.Heads), int64(s.Vocab)
	perLayer, back := 9*C+nh+3*I, 2*V+13*C+3*nh+3*I+3*max(C, I)
	if mamba {
		perLayer, back = perLayer+4*C, back+3*C
	}
	return int64(s.Layers)*perLayer + back + 3*C + V
}

func (e *cpuEngine) Prepare(cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (job, error) {
	if cfg.Dtype == "float64" {
		return prepareCPU[float64](cfg, s, w, in)
	}
	return prepareCPU[float32](cfg, s, w, in)
}

func prepareCPU[T reference.Float](cfg ttt.Config, s ttt.Size, w, in map[string]tensorfile.Tensor) (job, error) {
	B, L := cfg.Batch, cfg.SeqLen
	if cfg.InnerOnly {
		p, err := reference.NewInner[T](w, "layers.0.ttt.", s.Heads, s.HeadDim, cfg.MiniBatch, cfg.TTTType == "mlp", ttt.BaseLR(cfg.TTTType))
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
			if *x.dst, err = inputAs[T](in, x.name, x.shape); err != nil {
				return nil, err
			}
		}
		j.out = make([]T, len(j.xq))
		return j, nil
	}
	m, err := reference.NewModel[T](s, cfg.TTTType, backboneOf(cfg), cfg.MiniBatch, w)
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

// inputAs decodes one input tensor after checking its shape.
func inputAs[T reference.Float](in map[string]tensorfile.Tensor, name string, shape []int) ([]T, error) {
	t, ok := in[name]
	if !ok {
		return nil, fmt.Errorf("prepare inputs: missing tensor %q", name)
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, fmt.Errorf("prepare inputs: tensor %q has shape %v, want %v", name, t.Shape, shape)
	}
	v, err := t.Float64s()
	if err != nil {
		return nil, fmt.Errorf("prepare inputs: tensor %q: %w", name, err)
	}
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out, nil
}

// cpuForwardJob is a prepared full forward pass.
type cpuForwardJob[T reference.Float] struct {
	m             *reference.Model[T]
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
type cpuInnerJob[T reference.Float] struct {
	p                *reference.Inner[T]
	xq, xk, xv, gate []T
	out              []T
	batch, seqLen    int
	shape            []int
	stepped          bool
}

func (j *cpuInnerJob[T]) Step() error {
	j.p.Run(j.out, j.xq, j.xk, j.xv, j.gate, j.batch, j.seqLen)
	j.stepped = true
	return nil
}

func (j *cpuInnerJob[T]) Output() (string, tensorfile.Tensor, error) {
	if !j.stepped {
		return "", tensorfile.Tensor{}, fmt.Errorf("output: no inner-only step has run")
	}
	return "out", pack(j.out, j.shape), nil
}

// MemoryBytes counts the inner parameters and scratch, inputs and output.
func (j *cpuInnerJob[T]) MemoryBytes() int64 {
	var z T
	size := int64(4)
	if _, ok := any(z).(float64); ok {
		size = 8
	}
	return j.p.Bytes() + size*int64(len(j.xq)+len(j.xk)+len(j.xv)+len(j.gate)+len(j.out))
}

func (j *cpuInnerJob[T]) Close() error { j.p, j.out = nil, nil; return nil }

// pack stores float64 results as F64 and float32 results as F32.
func pack[T reference.Float](v []T, shape []int) tensorfile.Tensor {
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
