package cpu

import (
	"fmt"
	"math"
	"time"
)

// Forward maps tokens [batch, seqLen] to logits [batch, seqLen, V]. The
// returned slice belongs to the model and is overwritten by the next call.
func (m *Model[T]) Forward(tokens []int32, batch, seqLen int) ([]T, error) {
	s := m.Size
	if len(tokens) != batch*seqLen {
		return nil, fmt.Errorf("forward: %d tokens for batch %d x seq_len %d", len(tokens), batch, seqLen)
	}
	if seqLen%m.K != 0 {
		return nil, fmt.Errorf("forward: seq_len %d is not a multiple of mini_batch %d", seqLen, m.K)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= s.Vocab {
			return nil, fmt.Errorf("forward: token %d at position %d outside [0, %d)", t, i, s.Vocab)
		}
	}
	if m.ws == nil || m.ws.batch != batch || m.ws.seqLen != seqLen {
		m.ws = newWorkspace[T](s, batch, seqLen)
	}
	ws, C, n := m.ws, s.Hidden, batch*seqLen

	t0 := m.Prof.begin()
	for i, t := range tokens {
		copy(ws.h[i*C:(i+1)*C], m.embed[int(t)*C:(int(t)+1)*C])
	}
	t0 = m.Prof.end("embed", t0)
	for l := range m.layers {
		t0 = m.tttBlock(&m.layers[l], ws, t0)
		t0 = m.mlpBlock(&m.layers[l], ws, t0)
	}
	rmsNorm(ws.x, ws.h, m.finalNorm, n)
	t0 = m.Prof.end("rms_norm", t0)
	MatMulNT(ws.logits, ws.x, m.embed, n, C, s.Vocab)
	m.Prof.end("gemm", t0)
	return ws.logits, nil
}

// tttBlock is h = h + TTT(RMSNorm_ttt(h)). t0 is when it started, for
// the phase record; it returns when it ended.
func (m *Model[T]) tttBlock(ly *layer[T], ws *workspace[T], t0 time.Time) time.Time {
	s, C, nh := m.Size, m.Size.Hidden, m.Size.Heads
	B, L := ws.batch, ws.seqLen
	n := B * L
	rmsNorm(ws.x, ws.h, ly.tttNorm, n)
	t0 = m.Prof.end("rms_norm", t0)
	MatMulNT(ws.q, ws.x, ly.wq, n, C, C)
	MatMulNT(ws.k, ws.x, ly.wk, n, C, C)
	MatMulNT(ws.v, ws.x, ly.wv, n, C, C)
	MatMulNT(ws.lr, ws.x, ly.lrW, n, C, nh)
	t0 = m.Prof.end("gemm", t0)

	// Split heads to [B, nh, L, f], rotating Q and K, and lay the gate out
	// as [B, nh, L].
	f := s.HeadDim
	parallelRows(n, func(row int) {
		b, t := row/L, row%L
		for hd := 0; hd < nh; hd++ {
			src := row*C + hd*f
			dst := ((b*nh+hd)*L + t) * f
			m.rope.apply(ws.qh[dst:dst+f], ws.q[src:src+f], t%m.K)
			m.rope.apply(ws.kh[dst:dst+f], ws.k[src:src+f], t%m.K)
			copy(ws.vh[dst:dst+f], ws.v[src:src+f])
			ws.gate[(b*nh+hd)*L+t] = sigmoid(ws.lr[row*nh+hd] + ly.lrB[hd])
		}
	})

	t0 = m.Prof.end("rope_split_heads", t0)
	ly.inner.Run(ws.oh, ws.qh, ws.kh, ws.vh, ws.gate, B, L)
	t0 = m.Prof.end("ttt_inner", t0)

	// Merge heads back to [T, C], post-norm over C, project, add.
	parallelRows(n, func(row int) {
		b, t := row/L, row%L
		o := ws.q[row*C : (row+1)*C]
		for hd := 0; hd < nh; hd++ {
			src := ((b*nh+hd)*L + t) * f
			copy(o[hd*f:(hd+1)*f], ws.oh[src:src+f])
		}
		layerNormRow(o, o, ly.postW, ly.postB)
	})
	t0 = m.Prof.end("merge_heads_layer_norm", t0)
	MatMulNT(ws.x, ws.q, ly.wo, n, C, C)
	t0 = m.Prof.end("gemm", t0)
	addInto(ws.h, ws.x)
	return m.Prof.end("residual_add", t0)
}

// mlpBlock is h = h + SwiGLU(RMSNorm_mlp(h)).
func (m *Model[T]) mlpBlock(ly *layer[T], ws *workspace[T], t0 time.Time) time.Time {
	C, I := m.Size.Hidden, m.Size.MLP
	n := ws.batch * ws.seqLen
	rmsNorm(ws.x, ws.h, ly.mlpNorm, n)
	t0 = m.Prof.end("rms_norm", t0)
	MatMulNT(ws.g, ws.x, ly.wGate, n, C, I)
	MatMulNT(ws.u, ws.x, ly.wUp, n, C, I)
	t0 = m.Prof.end("gemm", t0)
	parallelRows(n, func(row int) {
		g, u := ws.g[row*I:(row+1)*I], ws.u[row*I:(row+1)*I]
		for i, v := range g {
			g[i] = silu(v) * u[i]
		}
	})
	t0 = m.Prof.end("swiglu", t0)
	MatMulNT(ws.x, ws.g, ly.wDown, n, I, C)
	t0 = m.Prof.end("gemm", t0)
	addInto(ws.h, ws.x)
	return m.Prof.end("residual_add", t0)
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
