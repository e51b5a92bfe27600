package ttt

import (
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The training step's forward: the launches of the forward (forward.go),
// flat or chunked as the forward is (wavefront.go), but writing every
// activation the backward needs into the layer's own buffers instead of the
// forward's shared ones, snapshotting the residual stream around each
// block, and having the inner kernel record its state at every mini-batch
// start. It is kept apart from enqueueLayer, which stays the forward-only
// path.

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
	var err error
	m.step(&err, "zero_grads", m.zeroGrads) // before the forward: on the side stream it hides under it
	if err != nil {
		return err
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

// enqueueTrainForward is the training step's forward: chunked where the
// model set up lanes (wavefront.go; not under a profile, whose events need
// one stream), else flat. Both run the same stages on spans of rows.
func (m *Model) enqueueTrainForward() error {
	if m.chunks != nil && m.prof == nil {
		return m.wavefront(m.trainStage)
	}
	sp := span{n: m.cfg.Batch * m.cfg.SeqLen, whole: true}
	for st := 0; st < len(m.w.layers)+2; st++ {
		if err := m.trainStage(st, sp); err != nil {
			return err
		}
	}
	return nil
}

// trainStage runs stage st of the training forward on the span's rows:
// 0 the embedding, 1..layers a layer, layers+1 the final norm and head.
func (m *Model) trainStage(st int, sp span) error {
	C, V := m.size.Hidden, m.size.Vocab
	b, w, t, A := &m.buf, &m.w, m.train, m.actBytes()
	rows := func(p gpu.Ptr, width int, bytes int64) gpu.Ptr { return p.Off(sp.r0*width, bytes) }
	var err error
	switch st {
	case 0:
		m.step(&err, "embed", m.rowLaunch("xb_embed", sp, b.tokens.Off(sp.r0, 4), w.embed, rows(t.hs[0], C, 4), gpu.I32(C)))
	case len(w.layers) + 1:
		xf := rows(t.xf, C, A)
		m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, rows(t.hs[2*len(w.layers)], C, 4), w.finalNorm, xf, gpu.I32(C)))
		m.step(&err, "gemm_head", func() error { return m.gemm(true, false, sp.n, V, C, xf, C, w.embed, C, rows(b.logits, V, A), V) })
	default:
		err = m.enqueueTrainLayer(st-1, sp)
	}
	return err
}

// enqueueTrainLayer runs layer l of the training forward on the span's rows
// (the mamba backbone: whole spans only, its training forward is flat).
func (m *Model) enqueueTrainLayer(l int, sp span) error {
	r, cfg, s, A := m.dev.RT, m.cfg, m.size, m.actBytes()
	b, w, t := &m.buf, &m.w, m.train
	L, C, I, nh, ldp := cfg.SeqLen, s.Hidden, s.MLP, s.Heads, w.ldp
	lw, tl := &w.layers[l], &t.layers[l]
	rows := func(p gpu.Ptr, width int, bytes int64) gpu.Ptr { return p.Off(sp.r0*width, bytes) }
	h0, h1, h2 := rows(t.hs[2*l], C, 4), rows(t.hs[2*l+1], C, 4), rows(t.hs[2*l+2], C, 4)
	x1, o, y, x2 := rows(tl.x1, C, A), rows(tl.o, C, A), rows(tl.y, C, A), rows(tl.x2, C, A)
	gu, a := rows(tl.gu, 2*I, A), rows(tl.a, I, A)
	swGrid := [3]int{min((sp.n*I+rowThreads-1)/rowThreads, 32*max(r.SMCount, 1)), 1, 1}
	var err error
	// in is the TTT block's input: the layer's, or (mamba) the conv
	// block's output; p the fused projection, kept per layer by mamba for
	// the convolutions' and the gate's backward. prep writes head-major
	// rows, so it takes the whole buffers and the span's first row.
	in, p := h0, rows(b.p, ldp, A)
	prep := m.rowLaunch("xb_prep", sp, b.p, gpu.I32(ldp), lw.lrB, w.rope, tl.xq, tl.xk, tl.xv, tl.gate, gpu.I32(L), gpu.I32(nh), gpu.I32(sp.r0))
	postNorm := m.rowLaunch("xb_layernorm", sp, o, lw.postW, lw.postB, y, gpu.I32(C))
	if m.mamba() {
		if !sp.whole {
			return fmt.Errorf("gpu: the mamba backbone's training forward is flat, not chunked")
		}
		in, p = m.enqueueTrainConvBlock(&err, l, h0), tl.mamba.p
		prep, postNorm = m.trainPrepMamba(l), m.trainPostNormGate(l)
	}
	m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, in, lw.tttNorm, x1, gpu.I32(C)))
	m.step(&err, "gemm_qkvg", func() error { return m.gemm(false, false, sp.n, ldp, C, x1, C, lw.wqkvg, ldp, p, ldp) })
	m.step(&err, "prep", prep)
	m.step(&err, "inner", func() error {
		io := innerIO{tl.xq, tl.xk, tl.xv, tl.gate, tl.o, tl.trace}
		if sp.whole {
			return m.launchInner(&lw.inner, io.xq, io.xk, io.xv, io.gate, io.out, int64(L*C), int64(s.HeadDim), int64(C), 0, io.trace)
		}
		return m.innerChunk(l, sp, io)
	})
	m.step(&err, "norm", postNorm)
	m.step(&err, "copy", m.copyF32(in, h1, sp.n*C))
	m.step(&err, "gemm_o", func() error { return m.gemm(false, true, sp.n, C, C, y, C, lw.wo, C, h1, C) })
	m.step(&err, "norm", m.rowLaunch("xb_rmsnorm", sp, h1, lw.mlpNorm, x2, gpu.I32(C)))
	m.step(&err, "gemm_gate_up", func() error { return m.gemm(false, false, sp.n, 2*I, C, x2, C, lw.wgu, 2*I, gu, 2*I) })
	m.step(&err, "swiglu", func() error {
		return r.Launch("xb_swiglu", m.fn["xb_swiglu"], swGrid, [3]int{rowThreads, 1, 1}, 0, gu, a, gpu.I32(I), gpu.I64(int64(sp.n)*int64(I)))
	})
	m.step(&err, "copy", m.copyF32(h1, h2, sp.n*C))
	m.step(&err, "gemm_down", func() error { return m.gemm(false, true, sp.n, C, I, a, I, lw.wdown, C, h2, C) })
	return err
}
