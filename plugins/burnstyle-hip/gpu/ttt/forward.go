package ttt

import "github.com/xbench/xbench/plugins/burnstyle-hip/gpu"

// The forward pass as launch sequences over spans of token rows. Per layer:
//
//	x = rmsnorm(h)            p = x @ [wq|wk|wv|lr_w^T]    prep: RoPE, gate, head-major
//	o = inner(q, k, v, gate)  y = layernorm(o)              h += y @ wo
//	(mamba.go: the mamba backbone's conv block first, its convolutions in prep, its gate in y)
//	x = rmsnorm(h)            gu = x @ [w_gate|w_up]        a = silu(g) * u
//	h += a @ w_down
//
// then logits = rmsnorm(h) @ embed^T. Residual adds ride on the GEMMs (beta 1
// into the float32 stream), so no separate add kernel runs. Every part but
// the inner loop is per token, so the same sequence runs on all B·L rows at
// once (the flat forward, here) or on one chunk of one sequence at a time
// (the chunked forward, wavefront.go).

const rowThreads = 256

// span is the token rows [r0, r0+n) of the [B·L] rows. A whole span covers
// every row; otherwise its rows are tokens [t0, t0+n) of sequence b, chunk c
// of that sequence and item idx of the chunked forward.
type span struct {
	r0, n         int
	b, t0, c, idx int
	whole         bool
}

// enqueueForward runs one forward: chunked where the model was set up for it
// and no profile is being taken (a profile's events need one stream).
func (m *Model) enqueueForward() error {
	if m.chunks != nil && m.prof == nil {
		return m.enqueueChunked()
	}
	sp := span{n: m.cfg.Batch * m.cfg.SeqLen, whole: true}
	if err := m.enqueueEmbed(sp); err != nil {
		return err
	}
	for l := range m.w.layers {
		if err := m.enqueueLayer(l, sp); err != nil {
			return err
		}
	}
	return m.enqueueHead(sp)
}

// step runs f unless an earlier step failed, then marks the end of part
// for Profile.
func (m *Model) step(err *error, part string, f func() error) {
	if *err == nil {
		if *err = f(); *err == nil {
			*err = m.mark(part)
		}
	}
}

// rowLaunch launches a one-block-per-row kernel over the span's rows.
func (m *Model) rowLaunch(name string, sp span, args ...any) func() error {
	return func() error {
		return m.dev.RT.Launch(name, m.fn[name], [3]int{sp.n, 1, 1}, [3]int{rowThreads, 1, 1}, 0, args...)
	}
}

func (m *Model) enqueueEmbed(sp span) error {
	var err error
	C := m.size.Hidden
	m.step(&err, "embed", m.rowLaunch("xb_embed", sp, m.buf.tokens.Off(sp.r0, 4), m.w.embed, m.buf.h.Off(sp.r0*C, 4), gpu.I32(C)))
	return err
}

func (m *Model) enqueueHead(sp span) error {
	var err error
	b, w, s, A := &m.buf, &m.w, m.size, m.actBytes()
	C, V := s.Hidden, s.Vocab
	x := b.x.Off(sp.r0*C, A)
	m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, b.h.Off(sp.r0*C, 4), w.finalNorm, x, gpu.I32(C)))
	m.step(&err, "gemm_head", func() error { return m.gemm(true, false, sp.n, V, C, x, C, w.embed, C, b.logits.Off(sp.r0*V, A), V) })
	return err
}

// enqueueLayer runs layer l on the span's rows.
func (m *Model) enqueueLayer(l int, sp span) error {
	r, cfg, s, A := m.dev.RT, m.cfg, m.size, m.actBytes()
	b, w := &m.buf, &m.w
	lw := &w.layers[l]
	L, C, I, nh, ldp := cfg.SeqLen, s.Hidden, s.MLP, s.Heads, w.ldp
	h, x, y := b.h.Off(sp.r0*C, 4), b.x.Off(sp.r0*C, A), b.y.Off(sp.r0*C, A)
	o, p := b.o.Off(sp.r0*C, A), b.p.Off(sp.r0*ldp, A)
	gu, a := b.gu.Off(sp.r0*2*I, A), b.a.Off(sp.r0*I, A)
	swGrid := [3]int{min((sp.n*I+rowThreads-1)/rowThreads, 32*max(r.SMCount, 1)), 1, 1}
	var err error
	if m.mamba() {
		m.enqueueConvBlock(&err, l, sp)
	}
	m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, h, lw.tttNorm, x, gpu.I32(C)))
	m.step(&err, "gemm_qkvg", func() error { return m.gemm(false, false, sp.n, ldp, C, x, C, lw.wqkvg, ldp, p, ldp) })
	// prep writes head-major rows, so it takes the whole buffers and the span's first row.
	prep, postNorm := m.rowLaunch("xb_prep", sp, b.p, gpu.I32(ldp), lw.lrB, w.rope, b.xq, b.xk, b.xv, b.gate, gpu.I32(L), gpu.I32(nh), gpu.I32(sp.r0)),
		m.rowLaunch("xb_layernorm", sp, o, lw.postW, lw.postB, y, gpu.I32(C))
	if m.mamba() {
		prep, postNorm = m.prepMamba(l, sp), m.postNormGate(l, sp)
	}
	m.step(&err, "prep", prep)
	m.step(&err, "inner", func() error {
		if sp.whole { // output straight to [B, L, C] (heads concatenated)
			return m.enqueueInner(&lw.inner, b.o, int64(L*C), int64(s.HeadDim), int64(C), 0)
		}
		return m.enqueueInnerChunk(l, sp)
	})
	m.step(&err, "norm", postNorm)
	m.step(&err, "gemm_o", func() error { return m.gemm(false, true, sp.n, C, C, y, C, lw.wo, C, h, C) })
	m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, h, lw.mlpNorm, x, gpu.I32(C)))
	m.step(&err, "gemm_gate_up", func() error { return m.gemm(false, false, sp.n, 2*I, C, x, C, lw.wgu, 2*I, gu, 2*I) })
	m.step(&err, "swiglu", func() error {
		return r.Launch("xb_swiglu", m.fn["xb_swiglu"], swGrid, [3]int{rowThreads, 1, 1}, 0, gu, a, gpu.I32(I), gpu.I64(int64(sp.n)*int64(I)))
	})
	m.step(&err, "gemm_down", func() error { return m.gemm(false, true, sp.n, C, I, a, I, lw.wdown, C, h, C) })
	return err
}

// enqueueInner launches the fused inner loop over the whole sequence: one
// block (or cluster) per (batch, head). The output strides place row t of
// head h of batch b at out + b*osb + h*osh + t*ost.
// prof, when set, receives 8 phase cycle counts per block.
func (m *Model) enqueueInner(iw *innerW, out gpu.Ptr, osb, osh, ost int64, prof gpu.Ptr) error {
	b, nmb := &m.buf, m.cfg.SeqLen/m.cfg.MiniBatch
	if m.geo.MLP {
		return m.launchMLPInner(m.cfg.Batch, b.xq, b.xk, b.xv, b.gate, innerState{iw.W1, iw.b1, iw.W2, iw.b2}, iw, out,
			osb, osh, ost, prof, innerState{}, nmb, 0)
	}
	return m.launchLinearInner(m.cfg.Batch, b.xq, b.xk, b.xv, b.gate, iw.W1, iw.b1, iw, out, osb, osh, ost, prof,
		0, 0, nmb, 0)
}

// launchInner is enqueueInner from the given inputs; trace, when set (the
// training forward), receives the inner state at every mini-batch start.
func (m *Model) launchInner(iw *innerW, xq, xk, xv, gate, out gpu.Ptr, osb, osh, ost int64, prof, trace gpu.Ptr) error {
	nmb := m.cfg.SeqLen / m.cfg.MiniBatch
	if m.geo.MLP {
		return m.launchMLPInner(m.cfg.Batch, xq, xk, xv, gate, innerState{iw.W1, iw.b1, iw.W2, iw.b2}, iw, out,
			osb, osh, ost, prof, innerState{}, nmb, trace)
	}
	return m.launchLinearInner(m.cfg.Batch, xq, xk, xv, gate, iw.W1, iw.b1, iw, out, osb, osh, ost, prof,
		0, 0, nmb, trace)
}

// innerState is where an inner loop's state is: the layer's weights, or a
// chunk's save slot (W2, b2 for mlp only). The zero value is no slot.
type innerState struct{ W1, b1, W2, b2 gpu.Ptr }

// launchMLPInner launches the mlp inner kernel for batches sequences from
// the given (possibly mid-sequence) inputs and output, starting from state
// from and walking nmb mini-batches; a non-zero save.W1 receives the final
// state (the chunked forward); a non-zero trace the state at every
// mini-batch start (the training forward).
func (m *Model) launchMLPInner(batches int, xq, xk, xv, gate gpu.Ptr, from innerState, iw *innerW, out gpu.Ptr,
	osb, osh, ost int64, prof gpu.Ptr, save innerState, nmb int, trace gpu.Ptr) error {
	r, s, name := m.dev.RT, m.size, m.geo.innerName()
	return r.Launch(name, m.fn[name], [3]int{batches * s.Heads, 1, 1}, [3]int{m.geo.NT, 1, 1}, m.geo.smemBytes(),
		xq, xk, xv, gate, from.W1, from.b1, from.W2, from.b2, iw.lnw, iw.lnb, iw.tokd, out,
		gpu.I64(osb), gpu.I64(osh), gpu.I64(ost), gpu.I32(s.Heads), gpu.I32(m.cfg.SeqLen), prof, save.W1, save.b1, save.W2, save.b2, gpu.I32(nmb), trace)
}

// launchLinearInner launches the linear inner kernel for batches sequences
// from the given (possibly mid-sequence) input and output pointers, starting
// from W1/b1 and walking nmb mini-batches. Only the cluster kernel carries
// state out (Wsave/bsave) and starts mid-sequence; the others take the
// whole sequence and must get nil Wsave and trace.
func (m *Model) launchLinearInner(batches int, xq, xk, xv, gate, W1, b1 gpu.Ptr, iw *innerW, out gpu.Ptr,
	osb, osh, ost int64, prof, Wsave, bsave gpu.Ptr, nmb int, trace gpu.Ptr) error {
	r, s := m.dev.RT, m.size
	name := m.geo.innerName()
	cs := m.geo.clusterSize()
	grid := [3]int{batches * s.Heads * cs, 1, 1}
	blk := [3]int{m.geo.NT, 1, 1}
	smem := m.geo.smemBytes()
	args := []any{xq, xk, xv, gate, W1, b1, iw.lnw, iw.lnb, iw.tokd, out, gpu.I64(osb), gpu.I64(osh), gpu.I64(ost),
		gpu.I32(s.Heads), gpu.I32(m.cfg.SeqLen), prof}
	if m.geo.cl() {
		args = append(args, Wsave, bsave, gpu.I32(nmb), trace)
	}
	return r.LaunchCluster(name, m.fn[name], grid, blk, smem, cs, args...)
}

// gemm is Y[M,N] = X[M,K] @ W (W [K,N], or [N,K] when transW) into an act
// Y, or added into the float32 residual stream when acc.
func (m *Model) gemm(transW, acc bool, M, N, K int, X gpu.Ptr, ldx int, W gpu.Ptr, ldw int, Y gpu.Ptr, ldy int) error {
	r := m.dev.RT
	if m.useBLAS() {
		beta := float32(0)
		if acc {
			beta = 1
		}
		h := r.BLAS.H
		if m.laneBLAS != 0 {
			h = m.laneBLAS
		}
		return r.BLAS.Gemm(h, m.geo.BF16, transW, acc, M, N, K, X, ldx, W, ldw, Y, ldy, beta)
	}
	name := "xb_gemm_nn"
	switch {
	case acc && transW:
		panic("gpu: no accumulating transposed GEMM kernel") // the forward never asks for one
	case acc:
		name = "xb_gemm_nn_acc"
	case transW:
		name = "xb_gemm_nt"
	}
	grid := [3]int{(N + 63) / 64, (M + 63) / 64, 1}
	return r.Launch(name, m.fn[name], grid, [3]int{256, 1, 1}, 0, X, gpu.I32(ldx), W, gpu.I32(ldw), Y, gpu.I32(ldy),
		gpu.I32(M), gpu.I32(N), gpu.I32(K))
}
