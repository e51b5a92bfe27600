package reference

import (
	"fmt"
	"time"

	"github.com/xbench/xbench/harness/numeric"
)

// ForwardBackward is the training step (docs/ttt-backward.md): the forward,
// keeping what the backward reads, the mean next-token cross-entropy, and
// its gradient with respect to every parameter, which Grads then holds. It
// returns the logits and the loss; the logits belong to the model and are
// overwritten by the next call. Forward keeps nothing and is unaffected.
func (m *Model[T]) ForwardBackward(tokens []int32, batch, seqLen int) (logits []T, loss float64, err error) {
	if err := m.checkTokens("forward-backward", tokens, batch, seqLen); err != nil {
		return nil, 0, err
	}
	if seqLen < 2 {
		return nil, 0, fmt.Errorf("forward-backward: seq_len %d has no next-token label to take the loss on (need at least 2)", seqLen)
	}
	if m.tape == nil || m.tape.batch != batch || m.tape.seqLen != seqLen {
		m.tape = nil // let the collector have the old shape's buffers first
		m.tape = newTape(m, batch, seqLen)
	}
	tp := m.tape
	m.forward(tokens, pass[T]{batch: batch, seqLen: seqLen, h: tp.h, layers: tp.layers, hFinal: tp.hFinal, xf: tp.xf, logits: tp.logits})
	return tp.logits, m.backward(tokens, tp), nil
}

// Grads is the last ForwardBackward's gradient of every parameter, by the
// spec's name (ttt.Params), each in the parameter's own layout ([in, out]
// for matrices); nil before the first. The slices belong to the model.
func (m *Model[T]) Grads() map[string][]T {
	if m.tape == nil {
		return nil
	}
	return m.tape.byName
}

// backward fills tp.grads from the forward kept in tp, and returns the loss.
func (m *Model[T]) backward(tokens []int32, tp *tape[T]) float64 {
	s := m.Size
	C, V, n := s.Hidden, s.Vocab, tp.batch*tp.seqLen
	b, g := &tp.b, &tp.grads
	t0 := m.Prof.Begin()
	g.clear()
	loss := crossEntropy(b.dlogits, tp.logits, tokens, tp.batch, tp.seqLen, V)
	t0 = m.Prof.End("softmax_cross_entropy_backward", t0)
	// The tied head, logits = xf @ embed^T.
	numeric.MatMulNT(b.dx, b.dlogits, tp.embedT, n, V, C)
	numeric.TransposeInto(b.dlogitsT, b.dlogits, n, V)
	numeric.TransposeInto(b.xt, tp.xf, n, C)
	numeric.MatMulNT(g.embed, b.dlogitsT, b.xt, V, n, C)
	t0 = m.Prof.End("gemm_backward", t0)
	clear(b.dh)
	rmsNormBack(b.dh, g.finalNorm, b.dx, tp.hFinal, m.finalNorm, b.big, n)
	t0 = m.Prof.End("rms_norm_backward", t0)
	for l := len(m.layers) - 1; l >= 0; l-- {
		ly, a, lw, lg := &m.layers[l], tp.layers[l], &tp.w[l], &g.layers[l]
		t0 = m.mlpBlockBack(ly, a, lw, lg, tp, t0)
		t0 = m.tttBlockBack(ly, a, lw, lg, tp, t0)
		if ly.mamba != nil {
			t0 = m.convBlockBack(ly, a, lg, tp, t0)
		}
	}
	// The embedding: a scatter-add, in token order.
	for i, t := range tokens {
		numeric.Axpy(g.embed[int(t)*C:(int(t)+1)*C], 1, b.dh[i*C:(i+1)*C])
	}
	m.Prof.End("embed_backward", t0)
	return loss
}

// mlpBlockBack is the backward of h = h + SwiGLU(RMSNorm_mlp(h)): b.dh is
// the gradient after the block on entry and before it on return.
func (m *Model[T]) mlpBlockBack(ly *layer[T], a *acts[T], lw *backWeights[T], lg *layerGrads[T], tp *tape[T], t0 time.Time) time.Time {
	C, I, n := m.Size.Hidden, m.Size.MLP, tp.batch*tp.seqLen
	b := &tp.b
	// out = sw @ W_down.
	numeric.MatMulNT(b.dsw, b.dh, lw.wDown, n, C, I)
	numeric.TransposeInto(b.xt, a.sw, n, I)
	weightGrad(lg.wDown, b.xt, b.dh, b.dyt, n, I, C)
	t0 = m.Prof.End("gemm_backward", t0)
	// sw = silu(g) * u; silu'(x) = sigmoid(x) (1 + x (1 - sigmoid(x))).
	parallelRows(n, func(row int) {
		for i := row * I; i < (row+1)*I; i++ {
			x, d := a.g[i], b.dsw[i]
			sg := sigmoid(x)
			b.dg[i] = d * a.u[i] * sg * (1 + x*(1-sg))
			b.du[i] = d * x * sg
		}
	})
	t0 = m.Prof.End("swiglu_backward", t0)
	numeric.MatMulNT(b.dx, b.dg, lw.wGate, n, I, C)
	addMatMulNT(b.dx, b.tmp, b.du, lw.wUp, n, I, C)
	numeric.TransposeInto(b.xt, a.xm, n, C)
	weightGrad(lg.wGate, b.xt, b.dg, b.dyt, n, C, I)
	weightGrad(lg.wUp, b.xt, b.du, b.dyt, n, C, I)
	t0 = m.Prof.End("gemm_backward", t0)
	rmsNormBack(b.dh, lg.mlpNorm, b.dx, a.hMLP, ly.mlpNorm, b.big, n)
	return m.Prof.End("rms_norm_backward", t0)
}

// convBlockBack is the backward of the mamba backbone's conv block,
// h = h + Conv(RMSNorm_conv(h)).
func (m *Model[T]) convBlockBack(ly *layer[T], a *acts[T], lg *layerGrads[T], tp *tape[T], t0 time.Time) time.Time {
	n, b, mb := tp.batch*tp.seqLen, &tp.b, ly.mamba
	mb.conv.backward(b.dx, lg.convW, lg.convB, b.dh, a.xc, tp.seqLen, n)
	t0 = m.Prof.End("conv_backward", t0)
	rmsNormBack(b.dh, lg.convNorm, b.dx, a.hConv, mb.convNorm, b.big, n)
	return m.Prof.End("rms_norm_backward", t0)
}
