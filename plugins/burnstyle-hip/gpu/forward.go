package gpu

// The forward pass as a launch sequence on the default stream. Per layer:
//
//	x = rmsnorm(h)            p = x @ [wq|wk|wv|lr_w^T]    prep: RoPE, gate, head-major
//	o = inner(q, k, v, gate)  y = layernorm(o)              h += y @ wo
//	x = rmsnorm(h)            gu = x @ [w_gate|w_up]        a = silu(g) * u
//	h += a @ w_down
//
// then logits = rmsnorm(h) @ embed^T. Residual adds ride on the GEMMs (beta 1
// into the float32 stream), so no separate add kernel runs.

const rowThreads = 256

func (m *Model) enqueueForward() error {
	r, cfg, s := m.dev.rt, m.cfg, m.size
	b, w := &m.buf, &m.w
	B, L, C, I, V, nh := cfg.Batch, cfg.SeqLen, s.Hidden, s.MLP, s.Vocab, s.Heads
	N := B * L
	rows := [3]int{N, 1, 1}
	blk := [3]int{rowThreads, 1, 1}
	var err error
	// step runs one launch group unless an earlier one failed, then marks
	// its end for Profile.
	step := func(part string, f func() error) {
		if err == nil {
			if err = f(); err == nil {
				err = m.mark(part)
			}
		}
	}
	launch := func(name string, grid [3]int, args ...any) func() error {
		return func() error { return r.launch(name, m.fn[name], grid, blk, 0, args...) }
	}
	step("embed", launch("xb_embed", rows, b.tokens, w.embed, b.h, i32(C)))
	swGrid := [3]int{min((N*I+rowThreads-1)/rowThreads, 32*max(r.smCount, 1)), 1, 1}
	for l := range w.layers {
		lw := &w.layers[l]
		step("norm", launch("xb_rmsnorm", rows, b.h, lw.tttNorm, b.x, i32(C)))
		step("gemm_qkvg", func() error { return m.gemm(false, false, N, w.ldp, C, b.x, C, lw.wqkvg, w.ldp, b.p, w.ldp) })
		step("prep", launch("xb_prep", rows, b.p, i32(w.ldp), lw.lrB, w.rope, b.xq, b.xk, b.xv, b.gate, i32(L), i32(nh)))
		// Inner output goes straight to [B, L, C] (heads concatenated).
		step("inner", func() error { return m.enqueueInner(&lw.inner, b.o, int64(L*C), int64(s.HeadDim), int64(C), 0) })
		step("norm", launch("xb_layernorm", rows, b.o, lw.postW, lw.postB, b.y, i32(C)))
		step("gemm_o", func() error { return m.gemm(false, true, N, C, C, b.y, C, lw.wo, C, b.h, C) })
		step("norm", launch("xb_rmsnorm", rows, b.h, lw.mlpNorm, b.x, i32(C)))
		step("gemm_gate_up", func() error { return m.gemm(false, false, N, 2*I, C, b.x, C, lw.wgu, 2*I, b.gu, 2*I) })
		step("swiglu", launch("xb_swiglu", swGrid, b.gu, b.a, i32(I), i64(int64(N)*int64(I))))
		step("gemm_down", func() error { return m.gemm(false, true, N, C, I, b.a, I, lw.wdown, C, b.h, C) })
	}
	step("norm", launch("xb_rmsnorm", rows, b.h, w.finalNorm, b.x, i32(C)))
	step("gemm_head", func() error { return m.gemm(true, false, N, V, C, b.x, C, w.embed, C, b.logits, V) })
	return err
}

// enqueueInner launches the fused inner loop: one block per (batch, head).
// The output strides place row t of head h of batch b at
// out + b*osb + h*osh + t*ost.
// prof, when set, receives 8 phase cycle counts per block.
func (m *Model) enqueueInner(iw *innerW, out devPtr, osb, osh, ost int64, prof devPtr) error {
	r, cfg, s, b := m.dev.rt, m.cfg, m.size, &m.buf
	name := m.geo.innerName()
	cs := m.geo.clusterSize()
	grid := [3]int{cfg.Batch * s.Heads * cs, 1, 1}
	blk := [3]int{m.geo.NT, 1, 1}
	smem := m.geo.smemBytes()
	if m.geo.MLP {
		return r.launch(name, m.fn[name], grid, blk, smem, b.xq, b.xk, b.xv, b.gate, iw.W1, iw.b1, iw.W2, iw.b2,
			iw.lnw, iw.lnb, iw.tokd, out, i64(osb), i64(osh), i64(ost), i32(s.Heads), i32(cfg.SeqLen), prof)
	}
	return r.launchCluster(name, m.fn[name], grid, blk, smem, cs, b.xq, b.xk, b.xv, b.gate, iw.W1, iw.b1,
		iw.lnw, iw.lnb, iw.tokd, out, i64(osb), i64(osh), i64(ost), i32(s.Heads), i32(cfg.SeqLen), prof)
}

// gemm is Y[M,N] = X[M,K] @ W (W [K,N], or [N,K] when transW) into an act
// Y, or added into the float32 residual stream when acc.
func (m *Model) gemm(transW, acc bool, M, N, K int, X devPtr, ldx int, W devPtr, ldw int, Y devPtr, ldy int) error {
	r := m.dev.rt
	if m.useBLAS() {
		beta := float32(0)
		if acc {
			beta = 1
		}
		return r.blas.gemm(m.geo.BF16, transW, acc, M, N, K, X, ldx, W, ldw, Y, ldy, beta)
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
	return r.launch(name, m.fn[name], grid, [3]int{256, 1, 1}, 0, X, i32(ldx), W, i32(ldw), Y, i32(ldy),
		i32(M), i32(N), i32(K))
}
