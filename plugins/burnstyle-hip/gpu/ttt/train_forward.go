package ttt

import "github.com/xbench/xbench/plugins/burnstyle-hip/gpu"

// The training step's forward: the launches of the flat forward
// (forward.go), but writing every activation the backward needs into the
// layer's own buffers instead of the forward's shared ones, snapshotting the
// residual stream around each block, and having the inner kernel record its
// state at every mini-batch start. It is kept apart from enqueueLayer, which
// stays the forward-only path (and the one the chunked forward shares).

// enqueueCall is one call's work as Run times and graph.go captures it:
// the training step, or the forward.
func (m *Model) enqueueCall() error {
	if m.train != nil {
		return m.enqueueTrain()
	}
	return m.enqueueForward()
}

// enqueueTrain runs one training step: forward, loss, backward.
func (m *Model) enqueueTrain() error {
	if m.cfg.InnerOnly {
		return m.enqueueInnerTrain()
	}
	if err := m.enqueueTrainForward(); err != nil {
		return err
	}
	return m.enqueueBackward()
}

// enqueueInnerTrain is the inner-only training step: the inner forward
// with its trace, then the inner backward of sum(out * dout).
func (m *Model) enqueueInnerTrain() error {
	b, t, cfg, s := &m.buf, m.train, m.cfg, m.size
	L, f := int64(cfg.SeqLen), int64(s.HeadDim)
	osb, osh := int64(s.Heads)*L*f, L*f
	iw := &m.w.layers[0].inner
	var err error
	m.step(&err, "inner", func() error {
		return m.launchInner(iw, b.xq, b.xk, b.xv, b.gate, b.out, osb, osh, f, 0, t.layers[0].trace)
	})
	m.step(&err, "zero_grads", m.zeroF32(t.grads.base, t.grads.floats))
	m.step(&err, "inner_bwd", func() error {
		return m.launchInnerBwd(iw, &t.grads.layers[0].inner, b.xq, b.xk, b.xv, b.gate, t.layers[0].trace, t.dO, osb, osh, f)
	})
	return err
}

// zeroF32 enqueues p[0:n) = 0 as a kernel, which a graph captures (a
// memset on the legacy stream would run outside it, or break the capture).
func (m *Model) zeroF32(p gpu.Ptr, n int64) func() error {
	return func() error {
		r := m.dev.RT
		grid := [3]int{int(min((n+rowThreads-1)/rowThreads, int64(8*max(r.SMCount, 1)))), 1, 1}
		return r.Launch("xb_zero", m.fn["xb_zero"], grid, [3]int{rowThreads, 1, 1}, 0, p, gpu.I64(n))
	}
}

// copyF32 enqueues dst = src over n floats.
func (m *Model) copyF32(src, dst gpu.Ptr, n int) func() error {
	return func() error {
		r := m.dev.RT
		grid := [3]int{min((n+rowThreads-1)/rowThreads, 8*max(r.SMCount, 1)), 1, 1}
		return r.Launch("xb_copy", m.fn["xb_copy"], grid, [3]int{rowThreads, 1, 1}, 0, src, dst, gpu.I64(int64(n)))
	}
}

func (m *Model) enqueueTrainForward() error {
	r, cfg, s := m.dev.RT, m.cfg, m.size
	b, w, t := &m.buf, &m.w, m.train
	N, L, C, I, V, nh, ldp := cfg.Batch*cfg.SeqLen, cfg.SeqLen, s.Hidden, s.MLP, s.Vocab, s.Heads, w.ldp
	sp := span{n: N, whole: true}
	swGrid := [3]int{min((N*I+rowThreads-1)/rowThreads, 32*max(r.SMCount, 1)), 1, 1}
	var err error
	m.step(&err, "embed", m.rowLaunch("xb_embed", sp, b.tokens, w.embed, t.hs[0], gpu.I32(C)))
	for l := range w.layers {
		lw, tl := &w.layers[l], &t.layers[l]
		h0, h1, h2 := t.hs[2*l], t.hs[2*l+1], t.hs[2*l+2]
		// in is the TTT block's input: the layer's, or (mamba) the conv
		// block's output; p the fused projection, kept per layer by mamba
		// for the convolutions' and the gate's backward.
		in, p := h0, b.p
		prep := m.rowLaunch("xb_prep", sp, b.p, gpu.I32(ldp), lw.lrB, w.rope, tl.xq, tl.xk, tl.xv, tl.gate, gpu.I32(L), gpu.I32(nh), gpu.I32(0))
		postNorm := m.rowLaunch("xb_layernorm", sp, tl.o, lw.postW, lw.postB, tl.y, gpu.I32(C))
		if m.mamba() {
			in, p = m.enqueueTrainConvBlock(&err, l, h0), tl.mamba.p
			prep, postNorm = m.trainPrepMamba(l), m.trainPostNormGate(l)
		}
		m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, in, lw.tttNorm, tl.x1, gpu.I32(C)))
		m.step(&err, "gemm_qkvg", func() error { return m.gemm(false, false, N, ldp, C, tl.x1, C, lw.wqkvg, ldp, p, ldp) })
		m.step(&err, "prep", prep)
		m.step(&err, "inner", func() error {
			return m.launchInner(&lw.inner, tl.xq, tl.xk, tl.xv, tl.gate, tl.o, int64(L*C), int64(s.HeadDim), int64(C), 0, tl.trace)
		})
		m.step(&err, "norm", postNorm)
		m.step(&err, "copy", m.copyF32(in, h1, N*C))
		m.step(&err, "gemm_o", func() error { return m.gemm(false, true, N, C, C, tl.y, C, lw.wo, C, h1, C) })
		m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, h1, lw.mlpNorm, tl.x2, gpu.I32(C)))
		m.step(&err, "gemm_gate_up", func() error { return m.gemm(false, false, N, 2*I, C, tl.x2, C, lw.wgu, 2*I, tl.gu, 2*I) })
		m.step(&err, "swiglu", func() error {
			return r.Launch("xb_swiglu", m.fn["xb_swiglu"], swGrid, [3]int{rowThreads, 1, 1}, 0, tl.gu, tl.a, gpu.I32(I), gpu.I64(int64(N)*int64(I)))
		})
		m.step(&err, "copy", m.copyF32(h1, h2, N*C))
		m.step(&err, "gemm_down", func() error { return m.gemm(false, true, N, C, I, tl.a, I, lw.wdown, C, h2, C) })
	}
	m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, t.hs[2*len(w.layers)], w.finalNorm, t.xf, gpu.I32(C)))
	m.step(&err, "gemm_head", func() error { return m.gemm(true, false, N, V, C, t.xf, C, w.embed, C, b.logits, V) })
	return err
}
