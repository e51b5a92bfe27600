package cpu

import (
	"fmt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// Model is the TTT language model with the transformer backbone at
// precision T. Dense weights are held transposed ([out, in]) for MatMulNT.
type Model[T Float] struct {
	Size      ttt.Size
	K         int
	embed     []T // [V, C]: the input embedding and, tied, the output head
	layers    []layer[T]
	finalNorm []T
	rope      rope[T]
	ws        *workspace[T]
	// Prof, when set, records the phases of every Forward (phases.go).
	Prof *Phases
}

type layer[T Float] struct {
	tttNorm, mlpNorm  []T
	wq, wk, wv, wo    []T // [C, C] transposed
	lrW, lrB          []T // [nh, C] (already [out, in]), [nh]
	inner             *Inner[T]
	postW, postB      []T // [C]
	wGate, wUp, wDown []T // [I, C], [I, C], [C, I] transposed
}

// NewModel loads every parameter of the spec's transformer model from w
// (names as in ttt.Params), checking each shape.
func NewModel[T Float](s ttt.Size, tttType string, miniBatch int, w map[string]tensorfile.Tensor) (*Model[T], error) {
	C, I, nh := s.Hidden, s.MLP, s.Heads
	m := &Model[T]{Size: s, K: miniBatch, rope: newRope[T](miniBatch, s.HeadDim)}
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
		for _, t := range []struct {
			dst        *[]T
			name       string
			rows, cols int // cols 0: a vector
			transposed bool
		}{
			{&ly.tttNorm, "ttt_norm", C, 0, false},
			{&ly.mlpNorm, "mlp_norm", C, 0, false},
			{&ly.wq, "ttt.wq", C, C, true},
			{&ly.wk, "ttt.wk", C, C, true},
			{&ly.wv, "ttt.wv", C, C, true},
			{&ly.wo, "ttt.wo", C, C, true},
			{&ly.lrW, "ttt.lr_w", nh, C, false},
			{&ly.lrB, "ttt.lr_b", nh, 0, false},
			{&ly.postW, "ttt.post_norm_w", C, 0, false},
			{&ly.postB, "ttt.post_norm_b", C, 0, false},
			{&ly.wGate, "mlp.w_gate", C, I, true},
			{&ly.wUp, "mlp.w_up", C, I, true},
			{&ly.wDown, "mlp.w_down", I, C, true},
		} {
			switch {
			case t.transposed:
				*t.dst, err = loadT[T](w, pre+t.name, t.rows, t.cols)
			case t.cols == 0:
				*t.dst, err = load[T](w, pre+t.name, t.rows)
			default:
				*t.dst, err = load[T](w, pre+t.name, t.rows, t.cols)
			}
			if err != nil {
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

// NumParams counts the loaded parameters; the tied embedding counts once.
func (m *Model[T]) NumParams() int64 {
	n := len(m.embed) + len(m.finalNorm)
	for _, l := range m.layers {
		n += len(l.tttNorm) + len(l.mlpNorm) + len(l.wq) + len(l.wk) + len(l.wv) + len(l.wo) +
			len(l.lrW) + len(l.lrB) + len(l.postW) + len(l.postB) + len(l.wGate) + len(l.wUp) + len(l.wDown)
		n += int(l.inner.NumParams())
	}
	return int64(n)
}

// Bytes counts the memory the model holds: parameters, the activation
// workspace of the last Forward shape and the inner loop's scratch. It is
// what this backend reports as peak memory; Go's own heap overhead and the
// caller's token buffer are not included.
func (m *Model[T]) Bytes() int64 {
	b := bytesOf[T](int(m.NumParams()))
	if len(m.layers) > 0 {
		b += m.layers[0].inner.Bytes() - bytesOf[T](int(m.layers[0].inner.NumParams()))
	}
	if m.ws != nil {
		b += m.ws.bytes()
	}
	return b
}

// workspace holds the activations of one forward shape, reused across calls
// so timed calls do not allocate.
type workspace[T Float] struct {
	batch, seqLen  int
	h, x, q, k, v  []T // [T, C]
	qh, kh, vh, oh []T // [B, nh, L, f]
	lr, gate       []T // [T, nh], [B, nh, L]
	g, u           []T // [T, I]
	logits         []T // [T, V]
}

func newWorkspace[T Float](s ttt.Size, batch, seqLen int) *workspace[T] {
	n := batch * seqLen
	vec := func(k int) []T { return make([]T, k) }
	C := s.Hidden
	return &workspace[T]{
		batch: batch, seqLen: seqLen,
		h: vec(n * C), x: vec(n * C), q: vec(n * C), k: vec(n * C), v: vec(n * C),
		qh: vec(n * C), kh: vec(n * C), vh: vec(n * C), oh: vec(n * C),
		lr: vec(n * s.Heads), gate: vec(n * s.Heads),
		g: vec(n * s.MLP), u: vec(n * s.MLP),
		logits: vec(n * s.Vocab),
	}
}

func (w *workspace[T]) bytes() int64 {
	n := 0
	for _, s := range [][]T{w.h, w.x, w.q, w.k, w.v, w.qh, w.kh, w.vh, w.oh, w.lr, w.gate, w.g, w.u, w.logits} {
		n += len(s)
	}
	return bytesOf[T](n)
}
