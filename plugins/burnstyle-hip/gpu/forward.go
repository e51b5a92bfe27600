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
	if err := r.launch("xb_embed", m.fn["xb_embed"], rows, blk, 0, b.tokens, w.embed, b.h, i32(C)); err != nil {
		return err
	}
	for l := range w.layers {
		lw := &w.layers[l]
		if err := r.launch("xb_rmsnorm", m.fn["xb_rmsnorm"], rows, blk, 0, b.h, lw.tttNorm, b.x, i32(C)); err != nil {
			return err
		}
		if err := m.gemm(false, false, N, 3*C+nh, C, b.x, C, lw.wqkvg, w.ldp, b.p, w.ldp); err != nil {
			return err
		}
		if err := r.launch("xb_prep", m.fn["xb_prep"], rows, blk, 0, b.p, i32(w.ldp), lw.lrB, w.rope,
			b.xq, b.xk, b.xv, b.gate, i32(L), i32(nh)); err != nil {
			return err
		}
		// Inner output goes straight to [B, L, C] (heads concatenated).
		if err := m.enqueueInner(&lw.inner, b.o, int64(L*C), int64(s.HeadDim), int64(C)); err != nil {
			return err
		}
		if err := r.launch("xb_layernorm", m.fn["xb_layernorm"], rows, blk, 0, b.o, lw.postW, lw.postB, b.y, i32(C)); err != nil {
			return err
		}
		if err := m.gemm(false, true, N, C, C, b.y, C, lw.wo, C, b.h, C); err != nil {
			return err
		}
		if err := r.launch("xb_rmsnorm", m.fn["xb_rmsnorm"], rows, blk, 0, b.h, lw.mlpNorm, b.x, i32(C)); err != nil {
			return err
		}
		if err := m.gemm(false, false, N, 2*I, C, b.x, C, lw.wgu, 2*I, b.gu, 2*I); err != nil {
			return err
		}
		total := int64(N) * int64(I)
		grid := int((total + rowThreads - 1) / rowThreads)
		if lim := 32 * max(r.smCount, 1); grid > lim {
			grid = lim
		}
		if err := r.launch("xb_swiglu", m.fn["xb_swiglu"], [3]int{grid, 1, 1}, blk, 0, b.gu, b.a, i32(I), i64(total)); err != nil {
			return err
		}
		if err := m.gemm(false, true, N, C, I, b.a, I, lw.wdown, C, b.h, C); err != nil {
			return err
		}
	}
	if err := r.launch("xb_rmsnorm", m.fn["xb_rmsnorm"], rows, blk, 0, b.h, w.finalNorm, b.x, i32(C)); err != nil {
		return err
	}
	return m.gemm(true, false, N, V, C, b.x, C, w.embed, C, b.logits, V)
}

// enqueueInner launches the fused inner loop: one block per (batch, head).
// The output strides place row t of head h of batch b at
// out + b*osb + h*osh + t*ost.
func (m *Model) enqueueInner(iw *innerW, out devPtr, osb, osh, ost int64) error {
	r, cfg, s, b := m.dev.rt, m.cfg, m.size, &m.buf
	name := innerName(m.geo.MLP)
	grid := [3]int{cfg.Batch * s.Heads, 1, 1}
	blk := [3]int{m.geo.NT, 1, 1}
	smem := m.geo.smemBytes()
	if m.geo.MLP {
		return r.launch(name, m.fn[name], grid, blk, smem, b.xq, b.xk, b.xv, b.gate, iw.W1, iw.b1, iw.W2, iw.b2,
			iw.lnw, iw.lnb, iw.tokd, out, i64(osb), i64(osh), i64(ost), i32(s.Heads), i32(cfg.SeqLen))
	}
	return r.launch(name, m.fn[name], grid, blk, smem, b.xq, b.xk, b.xv, b.gate, iw.W1, iw.b1,
		iw.lnw, iw.lnb, iw.tokd, out, i64(osb), i64(osh), i64(ost), i32(s.Heads), i32(cfg.SeqLen))
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
