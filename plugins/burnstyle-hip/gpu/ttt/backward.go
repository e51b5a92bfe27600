package ttt

import "github.com/xbench/xbench/plugins/burnstyle-hip/gpu"

// The training step's backward (docs/ttt-backward.md), layer by layer in
// reverse after the loss. cuBLAS does every product: dX = dY W^T (op(B)
// transposed) on the critical stream and dW = X^T dY (op(A) transposed) on
// the side stream (train_overlap.go), the weight gradients written once per
// step (beta 0), as each parameter has one product; our kernels do the
// row-wise parts and the fused inner-loop backward.

// gemmB is a backward product C[M,N] = op(A) op(B) on the current lane's
// cuBLAS handle, C float32 when cF32 (a gradient, or the input of a norm's
// backward), else the act type (the input of another GEMM).
func (m *Model) gemmB(transA, transB bool, M, N, K int, A gpu.Ptr, lda int, B gpu.Ptr, ldb int, C gpu.Ptr, ldc int, cF32 bool) func() error {
	return func() error {
		b := m.dev.RT.BLAS
		h := b.H
		if m.laneBLAS != 0 {
			h = m.laneBLAS
		}
		return b.GemmOp(h, m.geo.BF16, transA, transB, cF32, M, N, K, A, lda, B, ldb, C, ldc, 0)
	}
}

// rowGrid is the grid of the row kernels that sum columns: enough blocks to
// fill the device, few enough that their atomics per column stay cheap.
func (m *Model) rowGrid(rows int) [3]int {
	return [3]int{min(rows, 2*max(m.dev.RT.SMCount, 1)), 1, 1}
}

// rmsBwd is the RMSNorm backward of rows x with weight w from dy (float32):
// dh = dx (or dh += dx when acc), its act copy into slot (the next block's
// GEMM operand), dw += the weight's gradient.
func (m *Model) rmsBwd(x, w, dy, dw, slot gpu.Ptr, acc bool) func() error {
	return func() error {
		if err := m.willWrite(slot); err != nil {
			return err
		}
		t, N, C := m.train, m.cfg.Batch*m.cfg.SeqLen, m.size.Hidden
		return m.dev.RT.Launch("xb_rmsnorm_bwd", m.fn["xb_rmsnorm_bwd"], m.rowGrid(N), [3]int{rowThreads, 1, 1}, 0,
			x, w, dy, t.dh, slot, dw, gpu.I32(C), gpu.I32(N), gpu.I32(b2i(acc)))
	}
}

func (m *Model) enqueueBackward() error {
	r, cfg, s := m.dev.RT, m.cfg, m.size
	w, t, g := &m.w, m.train, &m.train.grads
	N, C, V := cfg.Batch*cfg.SeqLen, s.Hidden, s.Vocab
	invN := float32(0)
	if labelled := cfg.Batch * (cfg.SeqLen - 1); labelled > 0 {
		invN = 1 / float32(labelled)
	}
	// the gradients were zeroed before the forward (zeroGrads)
	err := m.forkBackward()
	m.step(&err, "softmax_xent", func() error { // named so xbench profile files it as elementwise
		return r.Launch("xb_xent", m.fn["xb_xent"], [3]int{N, 1, 1}, [3]int{rowThreads, 1, 1}, 0,
			m.buf.logits, m.buf.tokens, t.dlogits, t.loss, gpu.I32(V), gpu.I32(cfg.SeqLen), invN)
	})
	// The tied head: dxf = dlogits embed, dembed = dlogits^T xf (the
	// embedding's scatter-add comes after layer 0). Computing the loss and
	// dxf in each chunk's lane after its head instead measured no faster
	// (docs/results/tuning.md#native-ttt-training-step): the four narrower dxf products cost more and
	// slowed the last chunks' forward as much as they overlapped it.
	m.step(&err, "gemm_head_bwd", m.gemmB(false, false, N, C, V, t.dlogits, V, w.embed, C, t.dtmp, C, true))
	// dembed by row parts [v0, v1) of the vocabulary, one per window
	for j, parts := 0, m.headParts(); j < parts; j++ {
		v0, v1 := j*V/parts&^7, (j+1)*V/parts&^7 // 8-element aligned starts
		if j == parts-1 {
			v1 = V
		}
		if v1 <= v0 {
			continue
		}
		m.step(&err, "gemm_head_bwd", func() error {
			return m.sideAt(j, nil, m.gemmB(true, false, v1-v0, C, N, t.dlogits.Off(v0, m.actBytes()), V, t.xf, C, g.embed.Off(v0*C, 4), C, true))
		})
	}
	m.step(&err, "norm_bwd", func() error {
		if err := m.gradsZeroed(); err != nil {
			return err
		}
		return m.rmsBwd(t.hs[2*len(w.layers)], w.finalNorm, t.dtmp, g.finalNorm, t.slots[0], false)()
	})
	for l := len(w.layers) - 1; l >= 0 && err == nil; l-- {
		err = m.enqueueLayerBackward(l, len(w.layers)-1-l)
	}
	if err == nil {
		err = m.openWindow(1 << 30) // what no inner backward's window took
	}
	if err == nil {
		err = m.joinBackward()
	}
	m.step(&err, "embed_bwd", func() error {
		return r.Launch("xb_embed_bwd", m.fn["xb_embed_bwd"], [3]int{N, 1, 1}, [3]int{rowThreads, 1, 1}, 0,
			m.buf.tokens, t.dh, g.embed, gpu.I32(C))
	})
	return err
}

// enqueueLayerBackward takes dh from the gradient at layer l's output to
// the gradient at its input, adding layer l's parameter gradients; it is
// the i-th layer the backward visits, which picks its ring buffers.
func (m *Model) enqueueLayerBackward(l, i int) error {
	r, cfg, s := m.dev.RT, m.cfg, m.size
	w, t := &m.w, m.train
	lw, tl, g := &w.layers[l], &t.layers[l], &t.grads.layers[l]
	N, L, C, I, nh, ldp := cfg.Batch*cfg.SeqLen, cfg.SeqLen, s.Hidden, s.MLP, s.Heads, w.ldp
	dhOut, dhMid, dhIn := t.slots[(2*i)%4], t.slots[(2*i+1)%4], t.slots[(2*i+2)%4]
	dgu, dP := t.dgu[i%2], t.dP[i%2]
	blk := [3]int{rowThreads, 1, 1}
	var err error
	// h2 = h1 + SwiGLU(RMSNorm_mlp(h1))
	m.step(&err, "gemm_down_bwd", m.gemmB(false, true, N, I, C, dhOut, C, lw.wdown, C, t.da, I, true))
	m.step(&err, "swiglu_bwd", func() error {
		if err := m.willWrite(dgu); err != nil {
			return err
		}
		grid := [3]int{min((N*I+rowThreads-1)/rowThreads, 32*max(r.SMCount, 1)), 1, 1}
		return r.Launch("xb_swiglu_bwd", m.fn["xb_swiglu_bwd"], grid, blk, 0, tl.gu, t.da, dgu, gpu.I32(I), gpu.I64(int64(N)*int64(I)))
	})
	m.step(&err, "gemm_gate_up_bwd", func() error {
		return m.sideAt(i, []gpu.Ptr{dhOut, dgu}, func() error {
			if err := m.gemmB(true, false, I, C, N, tl.a, I, dhOut, C, g.wdown, C, true)(); err != nil {
				return err
			}
			return m.gemmB(true, false, C, 2*I, N, tl.x2, C, dgu, 2*I, g.wgu, 2*I, true)()
		})
	})
	m.step(&err, "gemm_gate_up_bwd", m.gemmB(false, true, N, C, 2*I, dgu, 2*I, lw.wgu, 2*I, t.dtmp, C, true))
	m.step(&err, "norm_bwd", m.rmsBwd(t.hs[2*l+1], lw.mlpNorm, t.dtmp, g.mlpNorm, dhMid, true))
	// h1 = h0 + LN_post(inner(prep(RMSNorm_ttt(h0) wqkvg))) wo
	m.step(&err, "gemm_o_bwd", m.gemmB(false, true, N, C, C, dhMid, C, lw.wo, C, t.dtmp, C, true))
	if m.mamba() { // y = gelu(x wg) * LN_post(o): dtmp becomes dLN_post, dP's wg block is written
		m.step(&err, "gate_bwd", func() error {
			if err := m.willWrite(dP); err != nil {
				return err
			}
			return m.mambaGateBwd(l, dP)()
		})
	}
	m.step(&err, "norm_bwd", func() error {
		return r.Launch("xb_layernorm_bwd", m.fn["xb_layernorm_bwd"], m.rowGrid(N), blk, 0,
			tl.o, lw.postW, t.dtmp, t.dO, g.postW, g.postB, gpu.I32(C), gpu.I32(N))
	})
	m.step(&err, "inner_bwd", func() error {
		if err := m.openWindow(i); err != nil {
			return err
		}
		return m.launchInnerBwd(&lw.inner, &g.inner, tl.xq, tl.xk, tl.xv, tl.gate, tl.trace, t.dO,
			int64(L*C), int64(s.HeadDim), int64(C))
	})
	in := t.hs[2*l] // the TTT block's input
	if m.mamba() {
		m.enqueueMambaPrepBwd(&err, l, dP) // dP's wait was the gate's
		in = tl.mamba.hc
	} else {
		m.step(&err, "prep_bwd", func() error {
			if err := m.willWrite(dP); err != nil {
				return err
			}
			return r.Launch("xb_prep_bwd", m.fn["xb_prep_bwd"], m.rowGrid(N), blk, 0,
				t.dq, t.dk, t.dv, t.dgate, tl.gate, w.rope, dP, gpu.I32(ldp), g.lrB, gpu.I32(L), gpu.I32(nh), gpu.I32(N))
		})
	}
	m.step(&err, "gemm_qkvg_bwd", func() error {
		return m.sideAt(i+1, []gpu.Ptr{dhMid, dP}, func() error { // the next layer's window
			if err := m.gemmB(true, false, C, C, N, tl.y, C, dhMid, C, g.wo, C, true)(); err != nil {
				return err
			}
			return m.gemmB(true, false, C, ldp, N, tl.x1, C, dP, ldp, g.wqkvg, ldp, true)()
		})
	})
	m.step(&err, "gemm_qkvg_bwd", m.gemmB(false, true, N, C, ldp, dP, ldp, lw.wqkvg, ldp, t.dtmp, C, true))
	// With mamba, the TTT norm's act copy is dead: the conv block's backward
	// reads dh and rewrites dhIn with the gradient at the layer's input.
	m.step(&err, "norm_bwd", m.rmsBwd(in, lw.tttNorm, t.dtmp, g.tttNorm, dhIn, true))
	if m.mamba() {
		m.enqueueConvBlockBwd(&err, l, t.hs[2*l], dhIn)
	}
	return err
}

// launchInnerBwd launches the fused inner backward, one block per (batch,
// head), from the saved inputs and state trace and the output gradient dout
// (row t of head h of batch b at dout + b*dsb + h*dsh + t*dst, float32),
// into the model's dq, dk, dv, dgate and the inner parameters' gradients gw
// (added to: the batch's sequences share the parameters).
func (m *Model) launchInnerBwd(iw, gw *innerW, xq, xk, xv, gate, trace, dout gpu.Ptr, dsb, dsh, dst int64) error {
	r, cfg, s, t := m.dev.RT, m.cfg, m.size, m.train
	name := m.geo.bwdName()
	args := []any{xq, xk, xv, gate, trace, iw.lnw, iw.lnb, iw.tokd, dout, gpu.I64(dsb), gpu.I64(dsh), gpu.I64(dst),
		t.dq, t.dk, t.dv, t.dgate, gw.W1, gw.b1}
	if m.geo.MLP {
		args = append(args, gw.W2, gw.b2)
	}
	args = append(args, gw.lnw, gw.lnb, gw.tokd, gpu.I32(s.Heads), gpu.I32(cfg.SeqLen))
	if m.geo.MLP {
		args = append(args, t.dstate)
	}
	cs := 1
	if m.geo.BwdCL {
		cs = m.geo.clusterSize()
	}
	return r.LaunchCluster(name, m.fn[name], [3]int{cfg.Batch * s.Heads * cs, 1, 1}, [3]int{m.geo.NTB, 1, 1}, m.geo.bwdSmemBytes(), cs, args...)
}
