package reference

import (
	"time"

	"github.com/xbench/xbench/harness/numeric"
)

// tttBlockBack is the backward of h = h + TTT(RMSNorm_ttt(h))
// (docs/ttt-backward.md, "The TTT layer around the inner loop" and, for
// mamba, "The mamba backbone"): b.dh is the gradient after the block on
// entry and before it on return.
func (m *Model[T]) tttBlockBack(ly *layer[T], a *acts[T], lw *backWeights[T], lg *layerGrads[T], tp *tape[T], t0 time.Time) time.Time {
	s := m.Size
	C, nh, f := s.Hidden, s.Heads, s.HeadDim
	B, L := tp.batch, tp.seqLen
	n := B * L
	b, mb := &tp.b, ly.mamba

	// out = pn @ Wo, or og @ Wo with og = gelu(X Wg) * pn (mamba).
	if mb != nil {
		parallelRows(n, func(row int) {
			for i := row * C; i < (row+1)*C; i++ {
				b.og[i] = gelu(a.xg[i]) * a.pn[i]
			}
		})
		numeric.MatMulNT(b.dy, b.dh, lw.wo, n, C, C) // d og
		numeric.TransposeInto(b.xt, b.og, n, C)
		weightGrad(lg.wo, b.xt, b.dh, b.dyt, n, C, C)
		t0 = m.Prof.End("gemm_backward", t0)
		parallelRows(n, func(row int) {
			for i := row * C; i < (row+1)*C; i++ {
				b.dpn[i] = b.dy[i] * gelu(a.xg[i])
				b.dxg[i] = b.dy[i] * a.pn[i] * geluGrad(a.xg[i])
			}
		})
		t0 = m.Prof.End("gelu_gate_backward", t0)
	} else {
		numeric.MatMulNT(b.dpn, b.dh, lw.wo, n, C, C)
		numeric.TransposeInto(b.xt, a.pn, n, C)
		weightGrad(lg.wo, b.xt, b.dh, b.dyt, n, C, C)
		t0 = m.Prof.End("gemm_backward", t0)
	}
	layerNormBack(b.dmerged, lg.postW, lg.postB, b.dpn, a.merged, ly.postW, b.big, n)

	// The heads and the inner loop.
	parallelRows(n, func(row int) {
		bb, t := row/L, row%L
		for hd := 0; hd < nh; hd++ {
			dst := ((bb*nh+hd)*L + t) * f
			copy(b.doh[dst:dst+f], b.dmerged[row*C+hd*f:row*C+(hd+1)*f])
		}
	})
	t0 = m.Prof.End("layer_norm_split_heads_backward", t0)
	ly.inner.Backward(lg.inner, b.dqh, b.dkh, b.dvh, b.dgate, b.doh, a.qh, a.kh, a.vh, a.gate, B, L)
	t0 = m.Prof.End("ttt_inner_backward", t0)

	// Merge the heads back, undoing RoPE, and take the gate's sigmoid.
	parallelRows(n, func(row int) {
		bb, t := row/L, row%L
		for hd := 0; hd < nh; hd++ {
			src, dst := ((bb*nh+hd)*L+t)*f, row*C+hd*f
			m.rope.back(b.dq[dst:dst+f], b.dqh[src:src+f], t%m.K)
			m.rope.back(b.dk[dst:dst+f], b.dkh[src:src+f], t%m.K)
			copy(b.dv[dst:dst+f], b.dvh[src:src+f])
			gt := a.gate[(bb*nh+hd)*L+t]
			b.dz[row*nh+hd] = b.dgate[(bb*nh+hd)*L+t] * gt * (1 - gt)
		}
	})
	t0 = m.Prof.End("rope_merge_heads_backward", t0)
	// gate = sigmoid(X lr_w^T + lr_b).
	numeric.TransposeInto(b.xt, a.x, n, C)
	numeric.TransposeInto(b.dzT, b.dz, n, nh)
	numeric.MatMulNT(lg.lrW, b.dzT, b.xt, nh, n, C)
	addColumnSums(lg.lrB, b.dz, n, nh)
	numeric.MatMulNT(b.dx, b.dz, lw.lrW, n, nh, C)

	// The projections into dX, the gradient of RMSNorm_ttt(h).
	if mb != nil {
		// Shared Q/K: XQ = ConvQ(X Wq), XK = ConvK(X Wq).
		mb.convQ.backward(b.dqk, lg.convQW, lg.convQB, b.dq, a.qk, L, n)
		mb.convK.backward(b.tmp, lg.convKW, lg.convKB, b.dk, a.qk, L, n)
		addInto(b.dqk, b.tmp)
		t0 = m.Prof.End("conv_backward", t0)
		addMatMulNT(b.dx, b.tmp, b.dqk, lw.wq, n, C, C)
		weightGrad(lg.wq, b.xt, b.dqk, b.dyt, n, C, C)
		addMatMulNT(b.dx, b.tmp, b.dxg, lw.wg, n, C, C)
		weightGrad(lg.wg, b.xt, b.dxg, b.dyt, n, C, C)
	} else {
		addMatMulNT(b.dx, b.tmp, b.dq, lw.wq, n, C, C)
		weightGrad(lg.wq, b.xt, b.dq, b.dyt, n, C, C)
		addMatMulNT(b.dx, b.tmp, b.dk, lw.wk, n, C, C)
		weightGrad(lg.wk, b.xt, b.dk, b.dyt, n, C, C)
	}
	addMatMulNT(b.dx, b.tmp, b.dv, lw.wv, n, C, C)
	weightGrad(lg.wv, b.xt, b.dv, b.dyt, n, C, C)
	t0 = m.Prof.End("gemm_backward", t0)
	rmsNormBack(b.dh, lg.tttNorm, b.dx, a.hTTT, ly.tttNorm, b.big, n)
	return m.Prof.End("rms_norm_backward", t0)
}
