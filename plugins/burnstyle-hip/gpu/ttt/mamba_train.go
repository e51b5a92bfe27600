package ttt

import (
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The mamba backbone in the training step: what its forward keeps beyond
// the transformer's, the conv block's launches in that forward, and the
// layer backward's mamba parts (the launches themselves are in
// mamba_backward.go). The training step runs the flat forward (no chunks,
// so no halo: every convolution reads its rows directly).

// mambaKept is one mamba layer's activations kept for the backward.
type mambaKept struct {
	hc gpu.Ptr // float32 [N, C]: h after the conv block, the TTT block's input (and its norm's)
	xc gpu.Ptr // act [N, C]: RMSNorm_conv(h), the conv block's input
	p  gpu.Ptr // act [N, ldp]: the fused projection, kept for XQK (dconv_q/k_w) and the gate logits
}

// mambaGradLayout carves one layer's conv block and Q/K convolution
// gradients (wg's is the fused projection's second block).
func (m *Model) mambaGradLayout(c *carver) mambaW {
	C, kw := m.size.Hidden, ttt.ConvWidth
	return mambaW{convNorm: c.take(C), convW: c.take(C * kw), convB: c.take(C),
		qW: c.take(C * kw), qB: c.take(C), kW: c.take(C * kw), kB: c.take(C)}
}

// setupMambaTrain allocates the kept activations of every layer and the
// column sums' scratch (setupTrain, mamba only).
func (m *Model) setupMambaTrain(t *train) error {
	N, C, A := int64(m.cfg.Batch*m.cfg.SeqLen), int64(m.size.Hidden), m.actBytes()
	var err error
	get := func(dst *gpu.Ptr, bytes int64) {
		if err == nil {
			*dst, err = m.alloc(bytes)
		}
	}
	for l := range t.layers {
		k := &t.layers[l].mamba
		get(&k.hc, 4*N*C)
		get(&k.xc, A*N*C)
		get(&k.p, A*N*int64(m.w.ldp))
	}
	get(&t.mambaPart, 4*int64(mambaPartFloats(m.dev.RT, int(N), int(C), m.size.Heads)))
	return err
}

// mambaPartFloats is the column sums' scratch: the larger of xb_conv_bwd's
// slots (ConvQ and ConvK together) and xb_prep_mamba_bwd's.
func mambaPartFloats(r *gpu.Runtime, N, C, nh int) int {
	return max(convBwdScratch(N, C), prepBwdSlots(r, N)*nh)
}

// mambaTrainBytes is what setupMambaTrain allocates, for the memory
// estimate (xb_prep_mamba_bwd's slots bounded by one a row).
func mambaTrainBytes(cfg ttt.Config, s ttt.Size) int64 {
	if cfg.Backbone != "mamba" {
		return 0
	}
	a := int64(4)
	if cfg.Dtype == "bfloat16" {
		a = 2
	}
	N, C := int64(cfg.Batch)*int64(cfg.SeqLen), int64(s.Hidden)
	ldp := int64((3*s.Hidden + s.Heads + 7) / 8 * 8)
	part := max(int64(convBwdScratch(int(N), int(C))), N*int64(s.Heads))
	return int64(s.Layers)*(4*N*C+a*N*C+a*N*ldp) + 4*part
}

// enqueueTrainConvBlock is the conv block of layer l in the training
// forward, hc = h + conv(RMSNorm_conv(h)) with h the layer's input, keeping
// xc and hc; it returns hc, the TTT block's input.
func (m *Model) enqueueTrainConvBlock(err *error, l int, h gpu.Ptr) gpu.Ptr {
	sp := span{n: m.cfg.Batch * m.cfg.SeqLen, whole: true}
	mw, k, C := &m.w.layers[l].mamba, &m.train.layers[l].mamba, m.size.Hidden
	m.step(err, "norm", m.rowLaunch("xb_rmsnorm", sp, h, mw.convNorm, k.xc, gpu.I32(C)))
	m.step(err, "copy", m.copyF32(h, k.hc, sp.n*C))
	m.step(err, "conv", m.rowLaunch("xb_conv_res", sp, k.xc, mw.convW, mw.convB, k.hc, gpu.I32(C), gpu.I32(m.cfg.SeqLen),
		gpu.I32(0), gpu.I32(0), gpu.I32(0), gpu.Ptr(0), gpu.Ptr(0)))
	return k.hc
}

// trainPrepMamba is xb_prep_mamba on every row of layer l's kept projection
// into the layer's kept inputs of the inner loop.
func (m *Model) trainPrepMamba(l int) func() error {
	sp := span{n: m.cfg.Batch * m.cfg.SeqLen, whole: true}
	w, mw, tl := &m.w, &m.w.layers[l].mamba, &m.train.layers[l]
	return m.rowLaunch("xb_prep_mamba", sp, tl.mamba.p, gpu.I32(w.ldp), w.layers[l].lrB, w.rope, mw.qW, mw.qB, mw.kW, mw.kB,
		tl.xq, tl.xk, tl.xv, tl.gate, gpu.I32(m.cfg.SeqLen), gpu.I32(m.size.Heads), gpu.I32(0), gpu.I32(0), gpu.I32(0), gpu.Ptr(0), gpu.Ptr(0))
}

// trainPostNormGate is post_norm then the output gate of layer l into its
// kept y, the gate logits read from the kept projection's second block.
func (m *Model) trainPostNormGate(l int) func() error {
	sp := span{n: m.cfg.Batch * m.cfg.SeqLen, whole: true}
	lw, tl, A := &m.w.layers[l], &m.train.layers[l], m.actBytes()
	return m.rowLaunch("xb_layernorm_gate", sp, tl.o, lw.postW, lw.postB, tl.mamba.p.Off(m.size.Hidden, A),
		gpu.I32(m.w.ldp), tl.y, gpu.I32(m.size.Hidden))
}

// mambaGateBwd is the output gate's backward at layer l: t.dtmp, the
// gradient at the gated output, becomes dPn, and the gate logits' gradient
// goes to dP's second block.
func (m *Model) mambaGateBwd(l int, dP gpu.Ptr) func() error {
	lw, tl, t, A := &m.w.layers[l], &m.train.layers[l], m.train, m.actBytes()
	C := m.size.Hidden
	return func() error {
		return gateBwd(m.dev.RT, m.fn, tl.o, lw.postW, lw.postB, tl.mamba.p.Off(C, A), m.w.ldp, t.dtmp,
			dP.Off(C, A), C, m.cfg.Batch*m.cfg.SeqLen)
	}
}

// enqueueMambaPrepBwd is layer l's xb_prep_bwd for mamba: RoPE's inverse,
// dv, dz and dlr_b, then ConvQ^T + ConvK^T into dP's first block with the
// Q/K convolutions' gradients. The gradients at the convolutions' outputs
// go to dO (free once the inner backward has read it) and dtmp (free
// between post_norm's backward and the projection's).
func (m *Model) enqueueMambaPrepBwd(err *error, l int, dP gpu.Ptr) {
	w, t, mw := &m.w, m.train, &m.w.layers[l].mamba
	g, tl := &t.grads.layers[l], &t.layers[l]
	N, C := m.cfg.Batch*m.cfg.SeqLen, m.size.Hidden
	m.step(err, "prep_bwd", func() error {
		return prepMambaBwd{dq: t.dq, dk: t.dk, dv: t.dv, dgate: t.dgate, gate: tl.gate, rope: w.rope, dxq: t.dO, dxk: t.dtmp,
			dP: dP, ldp: w.ldp, dlrB: g.lrB, part: t.mambaPart, L: m.cfg.SeqLen, nh: m.size.Heads, C: C, N: N}.enqueue(m.dev.RT, m.fn)
	})
	m.step(err, "conv_bwd", func() error {
		return convBwd{x: tl.mamba.p, ldx: w.ldp, dyA: t.dO, wA: mw.qW, dwA: g.mamba.qW, dbA: g.mamba.qB,
			dyB: t.dtmp, wB: mw.kW, dwB: g.mamba.kW, dbB: g.mamba.kB, dxa: dP, lda: w.ldp, part: t.mambaPart,
			C: C, L: m.cfg.SeqLen, N: N}.enqueue(m.dev.RT, m.fn)
	})
}

// enqueueConvBlockBwd takes dh from the gradient at layer l's conv block
// output (hc) to the gradient at the layer's input h: the convolution's
// backward from dh into dtmp, then RMSNorm_conv's, adding into dh, its act
// copy into slot (the next block's GEMM operand).
func (m *Model) enqueueConvBlockBwd(err *error, l int, h, slot gpu.Ptr) {
	t, mw := m.train, &m.w.layers[l].mamba
	g, k := &t.grads.layers[l].mamba, &t.layers[l].mamba
	C := m.size.Hidden
	m.step(err, "conv_bwd", func() error {
		return convBwd{x: k.xc, ldx: C, dyA: t.dh, wA: mw.convW, dwA: g.convW, dbA: g.convB, dxf: t.dtmp,
			part: t.mambaPart, C: C, L: m.cfg.SeqLen, N: m.cfg.Batch * m.cfg.SeqLen}.enqueue(m.dev.RT, m.fn)
	})
	m.step(err, "norm_bwd", m.rmsBwd(h, mw.convNorm, t.dtmp, g.convNorm, slot, true))
}
