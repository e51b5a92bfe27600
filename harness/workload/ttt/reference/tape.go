package reference

import (
	"fmt"

	"github.com/xbench/xbench/harness/numeric"
)

// tape is the training step's memory for one shape: each layer's kept
// activations, the backward's buffers, the weights in the layout the
// backward's products want, and the gradients.
type tape[T Float] struct {
	batch, seqLen int
	elems         int // what the buffers hold, for Bytes

	h                  []T // [n, C] the residual stream
	scratch            *acts[T]
	layers             []*acts[T]
	hFinal, xf, logits []T

	b      backBufs[T]
	w      []backWeights[T] // per layer
	embedT []T              // [C, V]
	grads  grads[T]
	byName map[string][]T
}

// backBufs are the backward's working buffers, shared by every layer.
type backBufs[T Float] struct {
	dlogits, dlogitsT  []T // [n, V], [V, n]
	dh                 []T // [n, C] the residual stream's gradient
	dx, dy, tmp        []T // [n, C]: a block's normalised input's gradient, a term of it, scratch
	dpn, dmerged       []T // [n, C] the post norm's output and input
	dq, dk, dv         []T // [n, C] the projections (Q and K after the convolutions)
	dqk, dxg, og       []T // [n, C] mamba: the convolutions' input, the gate's input, the gated output
	dqh, dkh, dvh, doh []T // [B, nh, L, f]
	dgate              []T // [B, nh, L]
	dz, dzT            []T // [n, nh] and [nh, n]: the gate's pre-sigmoid
	dsw, dg, du        []T // [n, I] SwiGLU's output, gate and up projections
	xt, dyt            []T // [max(C, I), n]: an input's and an output's transposes
	big                []T // [n, max(C, I)] scratch for the norms' weight gradients
}

// backWeights are one layer's projection matrices in the spec's [in, out]
// layout, which MatMulNT takes as the right operand of dx = dy @ W^T.
type backWeights[T Float] struct {
	wq, wk, wv, wo, wg []T // [C, C]
	lrW                []T // [C, nh]
	wGate, wUp         []T // [C, I]
	wDown              []T // [I, C]
}

// grads are the gradients of every parameter, in the spec's layout.
type grads[T Float] struct {
	embed, finalNorm []T
	layers           []layerGrads[T]
}

type layerGrads[T Float] struct {
	convNorm, convW, convB         []T // mamba
	tttNorm, wq, wk, wv, wo, wg    []T // wk transformer only, wg mamba only
	convQW, convQB, convKW, convKB []T // mamba
	lrW, lrB                       []T
	inner                          *InnerGrads[T]
	postW, postB                   []T
	mlpNorm, wGate, wUp, wDown     []T
}

func newTape[T Float](m *Model[T], batch, seqLen int) *tape[T] {
	s := m.Size
	C, I, V, nh, n := s.Hidden, s.MLP, s.Vocab, s.Heads, batch*seqLen
	mamba := m.Backbone == "mamba"
	var c counted[T]
	tp := &tape[T]{batch: batch, seqLen: seqLen, h: c.vec(n * C), hFinal: c.vec(n * C), xf: c.vec(n * C), logits: c.vec(n * V)}
	tp.scratch = newScratchActs[T](s, n, mamba, &c)
	for range m.layers {
		tp.layers = append(tp.layers, newKeptActs[T](s, n, mamba, tp.scratch, &c))
	}
	wide := max(C, I)
	tp.b = backBufs[T]{
		dlogits: c.vec(n * V), dlogitsT: c.vec(n * V), dh: c.vec(n * C), dx: c.vec(n * C), dy: c.vec(n * C), tmp: c.vec(n * C),
		dpn: c.vec(n * C), dmerged: c.vec(n * C), dq: c.vec(n * C), dk: c.vec(n * C), dv: c.vec(n * C),
		dqh: c.vec(n * C), dkh: c.vec(n * C), dvh: c.vec(n * C), doh: c.vec(n * C),
		dgate: c.vec(n * nh), dz: c.vec(n * nh), dzT: c.vec(n * nh),
		dsw: c.vec(n * I), dg: c.vec(n * I), du: c.vec(n * I),
		xt: c.vec(wide * n), dyt: c.vec(wide * n), big: c.vec(n * wide),
	}
	if mamba {
		tp.b.dqk, tp.b.dxg, tp.b.og = c.vec(n*C), c.vec(n*C), c.vec(n*C)
	}
	// The [in, out] weights: transposes of what the forward holds.
	back := func(wt []T, out, in int) []T {
		if wt == nil {
			return nil
		}
		w := c.vec(in * out)
		numeric.TransposeInto(w, wt, out, in)
		return w
	}
	for _, ly := range m.layers {
		bw := backWeights[T]{wq: back(ly.wq, C, C), wk: back(ly.wk, C, C), wv: back(ly.wv, C, C), wo: back(ly.wo, C, C),
			lrW: back(ly.lrW, nh, C), wGate: back(ly.wGate, I, C), wUp: back(ly.wUp, I, C), wDown: back(ly.wDown, C, I)}
		if ly.mamba != nil {
			bw.wg = back(ly.mamba.wg, C, C)
		}
		tp.w = append(tp.w, bw)
	}
	tp.embedT = back(m.embed, V, C)
	tp.grads, tp.byName = newGrads(m, &c)
	tp.elems = c.n
	return tp
}

func (tp *tape[T]) bytes() int64 { return bytesOf[T](tp.elems) }

// newGrads allocates a gradient for every parameter of m and indexes them
// by the spec's names (ttt.Params).
func newGrads[T Float](m *Model[T], c *counted[T]) (grads[T], map[string][]T) {
	like := func(v []T) []T {
		if v == nil {
			return nil
		}
		return c.vec(len(v))
	}
	g := grads[T]{embed: like(m.embed), finalNorm: like(m.finalNorm)}
	by := map[string][]T{"embed": g.embed, "final_norm": g.finalNorm}
	for l, ly := range m.layers {
		lg := layerGrads[T]{
			tttNorm: like(ly.tttNorm), wq: like(ly.wq), wk: like(ly.wk), wv: like(ly.wv), wo: like(ly.wo),
			lrW: like(ly.lrW), lrB: like(ly.lrB), postW: like(ly.postW), postB: like(ly.postB),
			mlpNorm: like(ly.mlpNorm), wGate: like(ly.wGate), wUp: like(ly.wUp), wDown: like(ly.wDown),
			inner: ly.inner.NewInnerGrads(),
		}
		c.n += int(ly.inner.NumParams())
		pre := fmt.Sprintf("layers.%d.", l)
		for name, v := range map[string][]T{
			"ttt_norm": lg.tttNorm, "ttt.wq": lg.wq, "ttt.wk": lg.wk, "ttt.wv": lg.wv, "ttt.wo": lg.wo,
			"ttt.lr_w": lg.lrW, "ttt.lr_b": lg.lrB, "ttt.post_norm_w": lg.postW, "ttt.post_norm_b": lg.postB,
			"mlp_norm": lg.mlpNorm, "mlp.w_gate": lg.wGate, "mlp.w_up": lg.wUp, "mlp.w_down": lg.wDown,
			"ttt.tok_delta": lg.inner.TokDelta, "ttt.ln_w": lg.inner.LnW, "ttt.ln_b": lg.inner.LnB,
			"ttt.W1": lg.inner.W1, "ttt.b1": lg.inner.B1, "ttt.W2": lg.inner.W2, "ttt.b2": lg.inner.B2,
		} {
			if v != nil {
				by[pre+name] = v
			}
		}
		if mb := ly.mamba; mb != nil {
			lg.convNorm, lg.convW, lg.convB = like(mb.convNorm), like(mb.conv.w), like(mb.conv.b)
			lg.convQW, lg.convQB, lg.convKW, lg.convKB = like(mb.convQ.w), like(mb.convQ.b), like(mb.convK.w), like(mb.convK.b)
			lg.wg = like(mb.wg)
			for name, v := range map[string][]T{
				"conv_norm": lg.convNorm, "conv_w": lg.convW, "conv_b": lg.convB, "ttt.wg": lg.wg,
				"ttt.conv_q_w": lg.convQW, "ttt.conv_q_b": lg.convQB, "ttt.conv_k_w": lg.convKW, "ttt.conv_k_b": lg.convKB,
			} {
				by[pre+name] = v
			}
		}
		g.layers = append(g.layers, lg)
	}
	return g, by
}

// clear zeroes every gradient the backward accumulates into.
func (g *grads[T]) clear() {
	clear(g.embed)
	clear(g.finalNorm)
	for _, lg := range g.layers {
		for _, v := range [][]T{lg.convNorm, lg.convW, lg.convB, lg.tttNorm, lg.wq, lg.wk, lg.wv, lg.wo, lg.wg,
			lg.convQW, lg.convQB, lg.convKW, lg.convKB, lg.lrW, lg.lrB, lg.postW, lg.postB,
			lg.mlpNorm, lg.wGate, lg.wUp, lg.wDown} {
			clear(v)
		}
	}
}
