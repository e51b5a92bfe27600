package reference

import (
	"fmt"

	"github.com/xbench/xbench/harness/profile"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// Model is the TTT language model (transformer or mamba backbone) at
// precision T. Dense weights are held transposed ([out, in]) for MatMulNT.
type Model[T Float] struct {
	Size      ttt.Size
	K         int
	Backbone  string // "transformer" or "mamba"
	embed     []T    // [V, C]: the input embedding and, tied, the output head
	layers    []layer[T]
	finalNorm []T
	rope      rope[T]
	ws        *workspace[T]
	tape      *tape[T] // the training step's memory (ForwardBackward)
	// Prof, when set, records the phases of every Forward.
	Prof *profile.Phases
}

type layer[T Float] struct {
	tttNorm, mlpNorm  []T
	wq, wk, wv, wo    []T // [C, C] transposed; wk is nil for mamba
	lrW, lrB          []T // [nh, C] (already [out, in]), [nh]
	inner             *Inner[T]
	postW, postB      []T // [C]
	wGate, wUp, wDown []T // [I, C], [I, C], [C, I] transposed
	mamba             *mambaLayer[T]
}

// mambaLayer is what the mamba backbone adds to a layer (spec, "--backbone
// mamba"): the conv block before TTT, the convolutions that turn the shared
// Q/K projection into XQ and XK, and the output gate.
type mambaLayer[T Float] struct {
	convNorm           []T // [C]
	conv, convQ, convK causalConv[T]
	wg                 []T // [C, C] transposed
}

// NewModel loads every parameter of the spec's model with the given
// backbone ("transformer", or "" for it, or "mamba") from w (names as in
// ttt.Params), checking each shape.
func NewModel[T Float](s ttt.Size, tttType, backbone string, miniBatch int, w map[string]tensorfile.Tensor) (*Model[T], error) {
	switch backbone {
	case "":
		backbone = "transformer"
	case "transformer", "mamba":
	default:
		return nil, fmt.Errorf("load weights: backbone %q (allowed: transformer, mamba)", backbone)
	}
	C, I, nh := s.Hidden, s.MLP, s.Heads
	m := &Model[T]{Size: s, K: miniBatch, Backbone: backbone, rope: newRope[T](miniBatch, s.HeadDim)}
	var err error
	if m.embed, err = load[T](w, "embed", s.Vocab, C); err != nil {
		return nil, err
	}
	if m.finalNorm, err = load[T](w, "final_norm", C); err != nil {
		return nil, err
	}
	for l := 0; l < s.Layers; l++ {
		var ly layer[T]
		pre := fmt.Sprintf("layers.%d.", l)
		dense := []tensorSpec[T]{
			{&ly.tttNorm, "ttt_norm", C, 0, false},
			{&ly.mlpNorm, "mlp_norm", C, 0, false},
			{&ly.wq, "ttt.wq", C, C, true},
			{&ly.wv, "ttt.wv", C, C, true},
			{&ly.wo, "ttt.wo", C, C, true},
			{&ly.lrW, "ttt.lr_w", nh, C, false},
			{&ly.lrB, "ttt.lr_b", nh, 0, false},
			{&ly.postW, "ttt.post_norm_w", C, 0, false},
			{&ly.postB, "ttt.post_norm_b", C, 0, false},
			{&ly.wGate, "mlp.w_gate", C, I, true},
			{&ly.wUp, "mlp.w_up", C, I, true},
			{&ly.wDown, "mlp.w_down", I, C, true},
		}
		if backbone == "mamba" {
			mb := &mambaLayer[T]{}
			ly.mamba = mb
			dense = append(dense,
				tensorSpec[T]{&mb.convNorm, "conv_norm", C, 0, false},
				tensorSpec[T]{&mb.conv.w, "conv_w", C, ttt.ConvWidth, false},
				tensorSpec[T]{&mb.conv.b, "conv_b", C, 0, false},
				tensorSpec[T]{&mb.convQ.w, "ttt.conv_q_w", C, ttt.ConvWidth, false},
				tensorSpec[T]{&mb.convQ.b, "ttt.conv_q_b", C, 0, false},
				tensorSpec[T]{&mb.convK.w, "ttt.conv_k_w", C, ttt.ConvWidth, false},
				tensorSpec[T]{&mb.convK.b, "ttt.conv_k_b", C, 0, false},
				tensorSpec[T]{&mb.wg, "ttt.wg", C, C, true})
		} else {
			dense = append(dense, tensorSpec[T]{&ly.wk, "ttt.wk", C, C, true})
		}
		for _, t := range dense {
			if err := t.load(w, pre); err != nil {
				return nil, err
			}
		}
		ly.inner, err = NewInner[T](w, pre+"ttt.", nh, s.HeadDim, miniBatch, tttType == "mlp", ttt.BaseLR(tttType))
		if err != nil {
			return nil, err
		}
		m.layers = append(m.layers, ly)
	}
	return m, nil
}

// tensorSpec is one parameter to load: a vector (cols 0) or a matrix, kept
// transposed when it is a projection MatMulNT applies.
type tensorSpec[T Float] struct {
	dst        *[]T
	name       string
	rows, cols int
	transposed bool
}

func (t tensorSpec[T]) load(w map[string]tensorfile.Tensor, prefix string) (err error) {
	switch {
	case t.transposed:
		*t.dst, err = loadT[T](w, prefix+t.name, t.rows, t.cols)
	case t.cols == 0:
		*t.dst, err = load[T](w, prefix+t.name, t.rows)
	default:
		*t.dst, err = load[T](w, prefix+t.name, t.rows, t.cols)
	}
	return err
}

// NumParams counts the loaded parameters; the tied embedding counts once.
func (m *Model[T]) NumParams() int64 {
	n := len(m.embed) + len(m.finalNorm)
	for _, l := range m.layers {
		n += len(l.tttNorm) + len(l.mlpNorm) + len(l.wq) + len(l.wk) + len(l.wv) + len(l.wo) +
			len(l.lrW) + len(l.lrB) + len(l.postW) + len(l.postB) + len(l.wGate) + len(l.wUp) + len(l.wDown)
		n += int(l.inner.NumParams())
		if mb := l.mamba; mb != nil {
			n += len(mb.convNorm) + len(mb.wg) + mb.conv.numParams() + mb.convQ.numParams() + mb.convK.numParams()
		}
	}
	return int64(n)
}

// Bytes counts the memory the model holds: parameters, the activation
// workspace of the last Forward shape, the training step's memory (kept
// activations, gradients; once ForwardBackward has run) and the inner
// loop's scratch. It is what this backend reports as peak memory; Go's own
// heap overhead and the caller's token buffer are not included.
func (m *Model[T]) Bytes() int64 {
	b := bytesOf[T](int(m.NumParams()))
	for _, l := range m.layers { // each layer's inner loop has its own scratch
		b += l.inner.Bytes() - bytesOf[T](int(l.inner.NumParams()))
	}
	if m.ws != nil {
		b += m.ws.bytes()
	}
	if m.tape != nil {
		b += m.tape.bytes()
	}
	return b
}
