package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Grads reads the last training step's gradients back, named and shaped as
// the spec's parameters (every matrix [in, out]; lr_w [nh, C]; W1
// [nh, f, f|4f]), whatever layout the device keeps them in: the fused
// [wq | wk | wv | lr_w^T] and [w_gate | w_up] gradients are split here.
// An inner-only training model also returns the gradients of its inputs
// "xq", "xk", "xv" (rotated) and "gate" (after the sigmoid).
func (m *Model) Grads() (map[string]tensorfile.Tensor, error) {
	t := m.train
	if t == nil {
		return nil, fmt.Errorf("gpu: Grads needs a model built for the training step (Backward)")
	}
	all, err := m.readF32(t.grads.base, t.grads.floats)
	if err != nil {
		return nil, err
	}
	at := func(p gpu.Ptr, n int) []float32 {
		o := int64(p-t.grads.base) / 4
		return append([]float32(nil), all[o:o+int64(n)]...)
	}
	s, cfg := m.size, m.cfg
	C, I, V, nh, f, h, K := s.Hidden, s.MLP, s.Vocab, s.Heads, m.geo.F, m.geo.hidden(), cfg.MiniBatch
	out := map[string]tensorfile.Tensor{}
	put := func(name string, v []float32, shape ...int) { out[name] = tensorfile.F32(shape, v) }
	inner := func(pre string, g *innerW) {
		put(pre+"W1", at(g.W1, nh*f*h), nh, f, h)
		put(pre+"b1", at(g.b1, nh*h), nh, h)
		if m.geo.MLP {
			put(pre+"W2", at(g.W2, nh*h*f), nh, h, f)
			put(pre+"b2", at(g.b2, nh*f), nh, f)
		}
		put(pre+"ln_w", at(g.lnw, nh*f), nh, f)
		put(pre+"ln_b", at(g.lnb, nh*f), nh, f)
		put(pre+"tok_delta", at(g.tokd, K), K)
	}
	if cfg.InnerOnly {
		inner("layers.0.ttt.", &t.grads.layers[0].inner)
		n := cfg.Batch * nh * cfg.SeqLen
		for _, in := range []struct {
			name string
			p    gpu.Ptr
			n    int
		}{{"xq", t.dq, n * f}, {"xk", t.dk, n * f}, {"xv", t.dv, n * f}, {"gate", t.dgate, n}} {
			v, err := m.readF32(in.p, int64(in.n))
			if err != nil {
				return nil, err
			}
			if in.name == "gate" {
				put(in.name, v, cfg.Batch, nh, cfg.SeqLen)
			} else {
				put(in.name, v, cfg.Batch, nh, cfg.SeqLen, f)
			}
		}
		return out, nil
	}
	put("embed", at(t.grads.embed, V*C), V, C)
	put("final_norm", at(t.grads.finalNorm, C), C)
	ldp := m.w.ldp
	for l, g := range t.grads.layers {
		pre := fmt.Sprintf("layers.%d.", l)
		put(pre+"ttt_norm", at(g.tttNorm, C), C)
		put(pre+"mlp_norm", at(g.mlpNorm, C), C)
		put(pre+"ttt.post_norm_w", at(g.postW, C), C)
		put(pre+"ttt.post_norm_b", at(g.postB, C), C)
		put(pre+"ttt.lr_b", at(g.lrB, nh), nh)
		put(pre+"ttt.wo", at(g.wo, C*C), C, C)
		put(pre+"mlp.w_down", at(g.wdown, I*C), I, C)
		fused := at(g.wqkvg, C*ldp)
		cols := func(c0, n int) []float32 {
			v := make([]float32, 0, C*n)
			for r := 0; r < C; r++ {
				v = append(v, fused[r*ldp+c0:r*ldp+c0+n]...)
			}
			return v
		}
		put(pre+"ttt.wq", cols(0, C), C, C)
		put(pre+m.secondProjection(), cols(C, C), C, C) // wk, or mamba's wg
		put(pre+"ttt.wv", cols(2*C, C), C, C)
		lrw := make([]float32, nh*C)
		for r := 0; r < C; r++ {
			for hd := 0; hd < nh; hd++ {
				lrw[hd*C+r] = fused[r*ldp+3*C+hd]
			}
		}
		put(pre+"ttt.lr_w", lrw, nh, C)
		gu := at(g.wgu, C*2*I)
		wg, wu := make([]float32, 0, C*I), make([]float32, 0, C*I)
		for r := 0; r < C; r++ {
			wg = append(wg, gu[r*2*I:r*2*I+I]...)
			wu = append(wu, gu[r*2*I+I:(r+1)*2*I]...)
		}
		put(pre+"mlp.w_gate", wg, C, I)
		put(pre+"mlp.w_up", wu, C, I)
		inner(pre+"ttt.", &g.inner)
		if m.mamba() {
			mw, kw := &g.mamba, ttt.ConvWidth
			put(pre+"conv_norm", at(mw.convNorm, C), C)
			put(pre+"conv_w", at(mw.convW, C*kw), C, kw)
			put(pre+"conv_b", at(mw.convB, C), C)
			put(pre+"ttt.conv_q_w", at(mw.qW, C*kw), C, kw)
			put(pre+"ttt.conv_q_b", at(mw.qB, C), C)
			put(pre+"ttt.conv_k_w", at(mw.kW, C*kw), C, kw)
			put(pre+"ttt.conv_k_b", at(mw.kB, C), C)
		}
	}
	return out, nil
}
