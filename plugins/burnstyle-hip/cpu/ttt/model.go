package ttt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/profile"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// Model is the TTT language model (transformer or mamba backbone) at
// precision T, its parameters held in the spec's layout ([in, out]
// matrices applied as x @ W).
type Model[T Float] struct {
	Size      ttt.Size
	MiniBatch int
	Backbone  string
	TTTType   string
	params    []ttt.Param
	values    map[string][]T
	// transposed marks the projections, held [out, in] (loaded once so
	// that no step transposes a weight); their gradients are turned back.
	transposed map[string]bool
	bytes      int64 // what the last step held at most (Bytes)
	// Phases, when not nil, collects the phases of every step.
	Phases *profile.Phases
}

// NewModel loads every parameter the spec lists for this configuration
// from w, checking each shape.
func NewModel[T Float](s ttt.Size, tttType, backbone string, miniBatch int, w map[string]tensorfile.Tensor) (*Model[T], error) {
	if backbone == "" {
		backbone = "transformer"
	}
	if backbone != "transformer" && backbone != "mamba" {
		return nil, fmt.Errorf("load weights: backbone %q (allowed: transformer, mamba)", backbone)
	}
	m := &Model[T]{Size: s, MiniBatch: miniBatch, Backbone: backbone, TTTType: tttType,
		params: ttt.Params(s, tttType, miniBatch, backbone)}
	return m, m.load(w)
}

// NewInner loads layer 0's inner-model parameters alone, for InnerOnly.
func NewInner[T Float](s ttt.Size, tttType string, miniBatch int, w map[string]tensorfile.Tensor) (*Model[T], error) {
	m := &Model[T]{Size: s, MiniBatch: miniBatch, TTTType: tttType, params: ttt.InnerParams(s, tttType, miniBatch)}
	return m, m.load(w)
}

func (m *Model[T]) load(w map[string]tensorfile.Tensor) error {
	m.values, m.transposed = map[string][]T{}, map[string]bool{}
	for _, p := range m.params {
		v, err := TensorAs[T](w, p.Name, p.Shape, "load weights")
		if err != nil {
			return err
		}
		if isProjection(p.Name) {
			v, m.transposed[p.Name] = numeric.Transpose(v, p.Shape[0], p.Shape[1]), true
		}
		m.values[p.Name] = v
	}
	return nil
}

// isProjection says whether a parameter is a dense [in, out] matrix the
// model applies as x @ W.
func isProjection(name string) bool {
	for _, suffix := range []string{".ttt.wq", ".ttt.wk", ".ttt.wv", ".ttt.wo", ".ttt.wg", ".mlp.w_gate", ".mlp.w_up", ".mlp.w_down"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// InnerOnly runs layer 0's inner loop on xq, xk, xv [B, nh, L, f] (as
// given: RoPE is part of the layer, not of the inner loop) and the gate
// [B, nh, L], and returns out [B, nh, L, f].
func (m *Model[T]) InnerOnly(xq, xk, xv, gate []T, batch, seqLen int) ([]T, error) {
	nh, f := m.Size.Heads, m.Size.HeadDim
	if seqLen%m.MiniBatch != 0 {
		return nil, fmt.Errorf("inner only: seq_len %d is not a multiple of mini_batch %d", seqLen, m.MiniBatch)
	}
	n := batch * nh * seqLen * f
	if len(xq) != n || len(xk) != n || len(xv) != n || len(gate) != n/f {
		return nil, fmt.Errorf("inner only: inputs of %d, %d, %d and %d elements, want %d (and %d for the gate)", len(xq), len(xk), len(xv), len(gate), n, n/f)
	}
	tp := NewTape[T](false)
	g := &graph[T]{m: m, tp: tp, batch: batch, seqLen: seqLen, params: map[string]*Tensor[T]{}}
	in := func(v []T) *Tensor[T] { return tp.Const(batch*nh, seqLen, f, v) }
	out := innerLoop(tp, g.innerParams("layers.0.ttt."), in(xq), in(xk), in(xv), tp.Const(batch*nh, seqLen, 1, gate), batch, m.MiniBatch)
	m.bytes = tp.Bytes()
	return out.V, nil
}

// TensorAs decodes tensor name of ts at precision T after checking its
// shape; op names the caller's step in errors.
func TensorAs[T Float](ts map[string]tensorfile.Tensor, name string, shape []int, op string) ([]T, error) {
	t, ok := ts[name]
	if !ok {
		return nil, fmt.Errorf("%s: missing tensor %q", op, name)
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, fmt.Errorf("%s: tensor %q has shape %v, want %v", op, name, t.Shape, shape)
	}
	v, err := t.Float64s()
	if err != nil {
		return nil, fmt.Errorf("%s: tensor %q: %w", op, name, err)
	}
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out, nil
}

// NumParams counts the loaded parameters; the tied embedding counts once.
func (m *Model[T]) NumParams() int64 {
	var n int64
	for _, v := range m.values {
		n += int64(len(v))
	}
	return n
}

// Bytes is the parameters plus what the last step held at most: for a
// training step every tensor of the tape with its gradient and the
// parameters' gradients; for a forward the tensors outside the layers and
// the largest layer's (the collector's slack not counted).
func (m *Model[T]) Bytes() int64 { return m.NumParams()*sizeOf[T]() + m.bytes }

// Forward returns the logits [B, L, V] of tokens [B, L].
func (m *Model[T]) Forward(tokens []int32, batch, seqLen int) ([]T, error) {
	logits, _, err := m.run(tokens, batch, seqLen, false)
	return logits, err
}

// TrainStep returns the logits and the gradient of the mean next-token
// cross-entropy with respect to every parameter, by name.
func (m *Model[T]) TrainStep(tokens []int32, batch, seqLen int) ([]T, map[string][]T, error) {
	return m.run(tokens, batch, seqLen, true)
}

func (m *Model[T]) run(tokens []int32, batch, seqLen int, train bool) ([]T, map[string][]T, error) {
	if err := m.checkTokens(tokens, batch, seqLen); err != nil {
		return nil, nil, err
	}
	tp := NewTape[T](train)
	g := &graph[T]{m: m, tp: tp, batch: batch, seqLen: seqLen, params: map[string]*Tensor[T]{}}
	g.clock = m.Phases.Begin()
	logits := g.forward(tokens)
	if !train {
		// Nothing is recorded: a layer's tensors are garbage once the next
		// layer starts, so at most one layer's are held beside the rest.
		var layers, largest int64
		for _, b := range g.layerBytes {
			layers, largest = layers+b, max(largest, b)
		}
		m.bytes = tp.Bytes() - layers + largest
		return logits.V, nil, nil
	}
	tp.Backward(tp.CrossEntropy(logits, tokens, seqLen))
	g.phase("backward")
	grads := make(map[string][]T, len(m.params))
	for _, p := range m.params {
		t, ok := g.params[p.Name]
		if !ok || t.G == nil {
			return nil, nil, fmt.Errorf("train step: no gradient reached %q", p.Name)
		}
		grads[p.Name] = t.G
		if m.transposed[p.Name] { // held [out, in]: back to the spec's [in, out]
			grads[p.Name] = numeric.Transpose(t.G, p.Shape[1], p.Shape[0])
		}
	}
	m.bytes = tp.Bytes() + m.NumParams()*sizeOf[T]()
	return logits.V, grads, nil
}

func (m *Model[T]) checkTokens(tokens []int32, batch, seqLen int) error {
	if len(tokens) != batch*seqLen {
		return fmt.Errorf("forward: %d tokens for batch %d x seq_len %d", len(tokens), batch, seqLen)
	}
	if seqLen%m.MiniBatch != 0 {
		return fmt.Errorf("forward: seq_len %d is not a multiple of mini_batch %d", seqLen, m.MiniBatch)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= m.Size.Vocab {
			return fmt.Errorf("forward: token %d at position %d outside [0, %d)", t, i, m.Size.Vocab)
		}
	}
	return nil
}
