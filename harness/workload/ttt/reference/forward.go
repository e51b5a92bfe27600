package reference

import (
	"fmt"
	"math"
	"time"

	"github.com/xbench/xbench/harness/numeric"
)

// Forward maps tokens [batch, seqLen] to logits [batch, seqLen, V]. The
// returned slice belongs to the model and is overwritten by the next call.
func (m *Model[T]) Forward(tokens []int32, batch, seqLen int) ([]T, error) {
	if err := m.checkTokens("forward", tokens, batch, seqLen); err != nil {
		return nil, err
	}
	if m.ws == nil || m.ws.batch != batch || m.ws.seqLen != seqLen {
		m.ws = newWorkspace[T](m.Size, batch, seqLen, m.Backbone == "mamba")
	}
	ws := m.ws
	layers := make([]*acts[T], len(m.layers))
	for l := range layers {
		layers[l] = ws.layer // one set for every layer: nothing is kept
	}
	m.forward(tokens, pass[T]{batch: batch, seqLen: seqLen, h: ws.h, layers: layers, xf: ws.layer.x, logits: ws.logits})
	return ws.logits, nil
}

// checkTokens validates a call's tokens and shape; op names the call.
func (m *Model[T]) checkTokens(op string, tokens []int32, batch, seqLen int) error {
	if len(tokens) != batch*seqLen {
		return fmt.Errorf("%s: %d tokens for batch %d x seq_len %d", op, len(tokens), batch, seqLen)
	}
	if seqLen%m.K != 0 {
		return fmt.Errorf("%s: seq_len %d is not a multiple of mini_batch %d", op, seqLen, m.K)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= m.Size.Vocab {
			return fmt.Errorf("%s: token %d at position %d outside [0, %d)", op, t, i, m.Size.Vocab)
		}
	}
	return nil
}

// pass is where one forward writes: the residual stream, each layer's
// buffers, the final norm and the logits. hFinal, when set, keeps the final
// norm's input for the backward.
type pass[T Float] struct {
	batch, seqLen int
	h             []T
	layers        []*acts[T]
	hFinal, xf    []T
	logits        []T
}

// forward runs the model on tokens, which checkTokens accepted.
func (m *Model[T]) forward(tokens []int32, p pass[T]) {
	s, C, n := m.Size, m.Size.Hidden, p.batch*p.seqLen
	t0 := m.Prof.Begin()
	for i, t := range tokens {
		copy(p.h[i*C:(i+1)*C], m.embed[int(t)*C:(int(t)+1)*C])
	}
	t0 = m.Prof.End("embed", t0)
	for l := range m.layers {
		ly, a := &m.layers[l], p.layers[l]
		if ly.mamba != nil {
			t0 = m.convBlock(ly, a, p, t0)
		}
		t0 = m.tttBlock(ly, a, p, t0)
		t0 = m.mlpBlock(ly, a, p, t0)
	}
	keep(p.hFinal, p.h)
	rmsNorm(p.xf, p.h, m.finalNorm, n)
	t0 = m.Prof.End("rms_norm", t0)
	numeric.MatMulNT(p.logits, p.xf, m.embed, n, C, s.Vocab)
	m.Prof.End("gemm", t0)
}

// keep copies the residual stream h into dst, the training step's record
// of a block's input; a plain forward passes nil and copies nothing.
func keep[T Float](dst, h []T) {
	if dst != nil {
		copy(dst, h)
	}
}

// convBlock is the mamba backbone's h = h + Conv(RMSNorm_conv(h)).
func (m *Model[T]) convBlock(ly *layer[T], a *acts[T], p pass[T], t0 time.Time) time.Time {
	n := p.batch * p.seqLen
	keep(a.hConv, p.h)
	rmsNorm(a.xc, p.h, ly.mamba.convNorm, n)
	t0 = m.Prof.End("rms_norm", t0)
	ly.mamba.conv.apply(a.y, a.xc, p.seqLen, n)
	t0 = m.Prof.End("conv", t0)
	addInto(p.h, a.y)
	return m.Prof.End("residual_add", t0)
}

// tttBlock is h = h + TTT(RMSNorm_ttt(h)). t0 is when it started, for
// the phase record; it returns when it ended.
func (m *Model[T]) tttBlock(ly *layer[T], a *acts[T], p pass[T], t0 time.Time) time.Time {
	s, C, nh := m.Size, m.Size.Hidden, m.Size.Heads
	B, L := p.batch, p.seqLen
	n := B * L
	keep(a.hTTT, p.h)
	rmsNorm(a.x, p.h, ly.tttNorm, n)
	t0 = m.Prof.End("rms_norm", t0)
	if mb := ly.mamba; mb != nil {
		// Shared Q/K: one projection, then a convolution each.
		numeric.MatMulNT(a.qk, a.x, ly.wq, n, C, C)
		t0 = m.Prof.End("gemm", t0)
		mb.convQ.apply(a.q, a.qk, L, n)
		mb.convK.apply(a.k, a.qk, L, n)
		t0 = m.Prof.End("conv", t0)
	} else {
		numeric.MatMulNT(a.q, a.x, ly.wq, n, C, C)
		numeric.MatMulNT(a.k, a.x, ly.wk, n, C, C)
	}
	numeric.MatMulNT(a.v, a.x, ly.wv, n, C, C)
	numeric.MatMulNT(a.lr, a.x, ly.lrW, n, C, nh)
	t0 = m.Prof.End("gemm", t0)

	// Split heads to [B, nh, L, f], rotating Q and K, and lay the gate out
	// as [B, nh, L].
	f := s.HeadDim
	parallelRows(n, func(row int) {
		b, t := row/L, row%L
		for hd := 0; hd < nh; hd++ {
			src := row*C + hd*f
			dst := ((b*nh+hd)*L + t) * f
			m.rope.apply(a.qh[dst:dst+f], a.q[src:src+f], t%m.K)
			m.rope.apply(a.kh[dst:dst+f], a.k[src:src+f], t%m.K)
			copy(a.vh[dst:dst+f], a.v[src:src+f])
			a.gate[(b*nh+hd)*L+t] = sigmoid(a.lr[row*nh+hd] + ly.lrB[hd])
		}
	})

	t0 = m.Prof.End("rope_split_heads", t0)
	ly.inner.Run(a.oh, a.qh, a.kh, a.vh, a.gate, B, L)
	t0 = m.Prof.End("ttt_inner", t0)

	// Merge heads back to [T, C], post-norm over C.
	parallelRows(n, func(row int) {
		b, t := row/L, row%L
		o := a.merged[row*C : (row+1)*C]
		for hd := 0; hd < nh; hd++ {
			src := ((b*nh+hd)*L + t) * f
			copy(o[hd*f:(hd+1)*f], a.oh[src:src+f])
		}
		layerNormRow(a.pn[row*C:(row+1)*C], o, ly.postW, ly.postB)
	})
	t0 = m.Prof.End("merge_heads_layer_norm", t0)
	out := a.pn
	if mb := ly.mamba; mb != nil {
		// The output gate: gelu(X Wg) * pn.
		numeric.MatMulNT(a.xg, a.x, mb.wg, n, C, C)
		t0 = m.Prof.End("gemm", t0)
		parallelRows(n, func(row int) {
			for i := row * C; i < (row+1)*C; i++ {
				a.og[i] = gelu(a.xg[i]) * a.pn[i]
			}
		})
		t0 = m.Prof.End("gate", t0)
		out = a.og
	}
	numeric.MatMulNT(a.y, out, ly.wo, n, C, C)
	t0 = m.Prof.End("gemm", t0)
	addInto(p.h, a.y)
	return m.Prof.End("residual_add", t0)
}

// mlpBlock is h = h + SwiGLU(RMSNorm_mlp(h)).
func (m *Model[T]) mlpBlock(ly *layer[T], a *acts[T], p pass[T], t0 time.Time) time.Time {
	C, I := m.Size.Hidden, m.Size.MLP
	n := p.batch * p.seqLen
	keep(a.hMLP, p.h)
	rmsNorm(a.xm, p.h, ly.mlpNorm, n)
	t0 = m.Prof.End("rms_norm", t0)
	numeric.MatMulNT(a.g, a.xm, ly.wGate, n, C, I)
	numeric.MatMulNT(a.u, a.xm, ly.wUp, n, C, I)
	t0 = m.Prof.End("gemm", t0)
	parallelRows(n, func(row int) {
		g, u, sw := a.g[row*I:(row+1)*I], a.u[row*I:(row+1)*I], a.sw[row*I:(row+1)*I]
		for i, v := range g {
			sw[i] = silu(v) * u[i]
		}
	})
	t0 = m.Prof.End("swiglu", t0)
	numeric.MatMulNT(a.y, a.sw, ly.wDown, n, I, C)
	t0 = m.Prof.End("gemm", t0)
	addInto(p.h, a.y)
	return m.Prof.End("residual_add", t0)
}

// addInto sets h += d.
func addInto[T Float](h, d []T) {
	d = d[:len(h)]
	for i := range h {
		h[i] += d[i]
	}
}

// rope holds cos and sin of p * theta^(-2i/f) for positions p < K and
// i < f/2: positions restart in every mini-batch, so K rows suffice.
type rope[T Float] struct {
	half     int
	cos, sin []T // [K, f/2]
}

func newRope[T Float](k, f int) rope[T] {
	r := rope[T]{half: f / 2, cos: make([]T, k*f/2), sin: make([]T, k*f/2)}
	for p := 0; p < k; p++ {
		for i := 0; i < f/2; i++ {
			a := float64(p) * math.Pow(ropeTheta, -2*float64(i)/float64(f))
			r.cos[p*r.half+i], r.sin[p*r.half+i] = T(math.Cos(a)), T(math.Sin(a))
		}
	}
	return r
}

// apply writes the rotate-half RoPE of x at position p into dst.
func (r rope[T]) apply(dst, x []T, p int) {
	h := r.half
	c, s := r.cos[p*h:(p+1)*h], r.sin[p*h:(p+1)*h]
	for i := 0; i < h; i++ {
		a, b := x[i], x[i+h]
		dst[i] = a*c[i] - b*s[i]
		dst[i+h] = b*c[i] + a*s[i]
	}
}

// back writes into dx the gradient of apply's input x given dxr, its
// output's: the inverse rotation, at the same angle.
func (r rope[T]) back(dx, dxr []T, p int) {
	h := r.half
	c, s := r.cos[p*h:(p+1)*h], r.sin[p*h:(p+1)*h]
	for i := 0; i < h; i++ {
		a, b := dxr[i], dxr[i+h]
		dx[i] = a*c[i] + b*s[i]
		dx[i+h] = b*c[i] - a*s[i]
	}
}
