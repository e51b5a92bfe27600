package reference

import "github.com/xbench/xbench/harness/workload/ttt"

// acts are the buffers one layer's forward writes. A plain Forward gives
// every layer the same set (workspace); the training step gives each layer
// its own buffers for what the backward reads and shares the rest (tape).
type acts[T Float] struct {
	// The residual stream at each block's input, which the norms' backward
	// reads: kept in training, nil (not copied) in a plain forward.
	hConv, hTTT, hMLP []T

	xc         []T // [n, C] RMSNorm_conv(h) (mamba)
	x          []T // [n, C] X = RMSNorm_ttt(h)
	qk         []T // [n, C] X Wq, the convolutions' shared input (mamba)
	q, k, v    []T // [n, C] projections; Q and K after the convolutions (mamba)
	lr         []T // [n, nh] X lr_w^T
	qh, kh, vh []T // [B, nh, L, f] heads, Q and K rotated
	gate       []T // [B, nh, L] after the sigmoid
	oh         []T // [B, nh, L, f] the inner loop's output
	merged     []T // [n, C] heads merged, the post norm's input
	pn         []T // [n, C] the post norm's output
	xg         []T // [n, C] X Wg, the gate before gelu (mamba)
	og         []T // [n, C] gelu(X Wg) * pn (mamba)
	xm         []T // [n, C] RMSNorm_mlp(h)
	g, u, sw   []T // [n, I] X W_gate, X W_up, silu(g) * u
	y          []T // [n, C] a block's branch output before the residual add
}

// counted allocates buffers and counts their elements, for Bytes.
type counted[T Float] struct{ n int }

func (c *counted[T]) vec(k int) []T { c.n += k; return make([]T, k) }

// newActs makes one set of every buffer a layer writes. In a plain forward
// the post norm, the gate and SwiGLU work in place (pn is merged, og is pn,
// sw is g), as nothing reads their inputs again.
func newActs[T Float](s ttt.Size, rows int, mamba bool, c *counted[T]) *acts[T] {
	C, I := s.Hidden, s.MLP
	a := &acts[T]{
		x: c.vec(rows * C), q: c.vec(rows * C), k: c.vec(rows * C), v: c.vec(rows * C),
		lr: c.vec(rows * s.Heads), qh: c.vec(rows * C), kh: c.vec(rows * C), vh: c.vec(rows * C),
		gate: c.vec(rows * s.Heads), oh: c.vec(rows * C), merged: c.vec(rows * C),
		xm: c.vec(rows * C), g: c.vec(rows * I), u: c.vec(rows * I), y: c.vec(rows * C),
	}
	a.pn, a.og, a.sw = a.merged, a.merged, a.g
	if mamba {
		a.xc, a.qk, a.xg = c.vec(rows*C), c.vec(rows*C), c.vec(rows*C)
	}
	return a
}

// newScratchActs makes the training step's buffers that no layer keeps:
// the projections before the heads are split, the gate's pre-sigmoid, the
// inner loop's output (merged into the kept heads), the gated output
// (mamba; recomputed by the backward) and a branch's output.
func newScratchActs[T Float](s ttt.Size, rows int, mamba bool, c *counted[T]) *acts[T] {
	C := s.Hidden
	a := &acts[T]{q: c.vec(rows * C), k: c.vec(rows * C), v: c.vec(rows * C), lr: c.vec(rows * s.Heads),
		oh: c.vec(rows * C), y: c.vec(rows * C)}
	if mamba {
		a.og = c.vec(rows * C)
	}
	return a
}

// newKeptActs makes one layer's buffers for the training step: its own for
// everything the backward reads, scratch's (newScratchActs) for the rest.
func newKeptActs[T Float](s ttt.Size, rows int, mamba bool, scratch *acts[T], c *counted[T]) *acts[T] {
	C, I := s.Hidden, s.MLP
	a := &acts[T]{
		hTTT: c.vec(rows * C), hMLP: c.vec(rows * C),
		x: c.vec(rows * C), q: scratch.q, k: scratch.k, v: scratch.v, lr: scratch.lr,
		qh: c.vec(rows * C), kh: c.vec(rows * C), vh: c.vec(rows * C), gate: c.vec(rows * s.Heads),
		oh: scratch.oh, merged: c.vec(rows * C), pn: c.vec(rows * C), og: scratch.og,
		xm: c.vec(rows * C), g: c.vec(rows * I), u: c.vec(rows * I), sw: c.vec(rows * I), y: scratch.y,
	}
	if mamba {
		a.hConv, a.xc, a.qk, a.xg = c.vec(rows*C), c.vec(rows*C), c.vec(rows*C), c.vec(rows*C)
	}
	return a
}

// workspace holds the activations of one forward shape, reused across calls
// so timed calls do not allocate.
type workspace[T Float] struct {
	batch, seqLen int
	elems         int // what the buffers hold, for Bytes
	h             []T // [n, C] the residual stream
	layer         *acts[T]
	logits        []T // [n, V]
}

func newWorkspace[T Float](s ttt.Size, batch, seqLen int, mamba bool) *workspace[T] {
	n := batch * seqLen
	var c counted[T]
	w := &workspace[T]{batch: batch, seqLen: seqLen, h: c.vec(n * s.Hidden),
		layer: newActs[T](s, n, mamba, &c), logits: c.vec(n * s.Vocab)}
	w.elems = c.n
	return w
}

func (w *workspace[T]) bytes() int64 { return bytesOf[T](w.elems) }
