package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// buffers are the activations of one call; sizes follow the config.
type buffers struct {
	tokens           gpu.Ptr // [N] int32
	h                gpu.Ptr // [N, C] float32 residual stream
	x, o, y          gpu.Ptr // [N, C] act: normed input, inner output, post-normed
	p                gpu.Ptr // [N, ldp] act: fused q|k|v|gate projection
	xq, xk, xv, gate gpu.Ptr // [B, nh, L, f] act, [B, nh, L] float32
	gu, a            gpu.Ptr // [N, 2I], [N, I] act
	logits           gpu.Ptr // [N, V] act
	out              gpu.Ptr // inner-only: [B, nh, L, f] act
}

func (m *Model) actBytes() int64 {
	if m.geo.BF16 {
		return 2
	}
	return 4
}

// loadFull uploads the whole model and allocates the forward's buffers.
func (m *Model) loadFull(w map[string]tensorfile.Tensor) error {
	s, cfg := m.size, m.cfg
	C, I, V, nh := s.Hidden, s.MLP, s.Vocab, s.Heads
	m.w.ldp = (3*C + nh + 7) / 8 * 8 // 16-byte rows for bf16 tensor-core loads
	mat := func(name string, shape ...int) ([]float32, error) { return host(w, name, shape...) }
	emb, err := mat("embed", V, C)
	if err != nil {
		return err
	}
	if m.w.embed, err = m.upload(emb, true, true); err != nil {
		return err
	}
	if m.w.finalNorm, err = m.param(w, "final_norm", C); err != nil {
		return err
	}
	if m.w.rope, err = m.upload(m.ropeTable(), false, false); err != nil {
		return err
	}
	for l := 0; l < s.Layers; l++ {
		pre := fmt.Sprintf("layers.%d.", l)
		var lw layerW
		var e error
		vec := func(dst *gpu.Ptr, name string, n ...int) {
			if e == nil {
				*dst, e = m.param(w, pre+name, n...)
			}
		}
		vec(&lw.tttNorm, "ttt_norm", C)
		vec(&lw.mlpNorm, "mlp_norm", C)
		vec(&lw.postW, "ttt.post_norm_w", C)
		vec(&lw.postB, "ttt.post_norm_b", C)
		vec(&lw.lrB, "ttt.lr_b", nh)
		if e != nil {
			return e
		}
		if lw.wqkvg, e = m.fusedQKVG(w, pre, mat); e != nil {
			return e
		}
		if m.mamba() {
			if lw.mamba, e = m.loadMambaW(w, pre); e != nil {
				return e
			}
		}
		wo, e := mat(pre+"ttt.wo", C, C)
		if e != nil {
			return e
		}
		wg, e1 := mat(pre+"mlp.w_gate", C, I)
		wu, e2 := mat(pre+"mlp.w_up", C, I)
		wd, e3 := mat(pre+"mlp.w_down", I, C)
		if e = firstErr(e1, e2, e3); e != nil {
			return e
		}
		gu := make([]float32, 0, 2*C*I)
		for r := 0; r < C; r++ {
			gu = append(append(gu, wg[r*I:(r+1)*I]...), wu[r*I:(r+1)*I]...)
		}
		for _, t := range []struct {
			dst *gpu.Ptr
			v   []float32
		}{{&lw.wo, wo}, {&lw.wgu, gu}, {&lw.wdown, wd}} {
			if *t.dst, e = m.upload(t.v, true, true); e != nil {
				return e
			}
		}
		if lw.inner, e = m.loadInnerW(w, pre+"ttt."); e != nil {
			return e
		}
		m.w.layers = append(m.w.layers, lw)
	}
	N := int64(cfg.Batch * cfg.SeqLen)
	A := m.actBytes()
	b := &m.buf
	for _, t := range []struct {
		dst   *gpu.Ptr
		bytes int64
	}{
		{&b.tokens, 4 * N}, {&b.h, 4 * N * int64(C)}, {&b.x, A * N * int64(C)}, {&b.o, A * N * int64(C)},
		{&b.y, A * N * int64(C)}, {&b.p, A * N * int64(m.w.ldp)}, {&b.xq, A * N * int64(C)},
		{&b.xk, A * N * int64(C)}, {&b.xv, A * N * int64(C)}, {&b.gate, 4 * N * int64(nh)},
		{&b.gu, A * N * int64(2*I)}, {&b.a, A * N * int64(I)}, {&b.logits, A * N * int64(V)},
	} {
		if *t.dst, err = m.alloc(t.bytes); err != nil {
			return err
		}
	}
	// The pad columns of the fused projection are never written by a GEMM
	// that skips them; zero them once so no uninitialised value is ever read.
	return m.dev.RT.Fill32(b.p, 0, A*N*int64(m.w.ldp)/4)
}

// fusedQKVG builds [C, ldp] = wq | wk | wv | lr_w^T | 0 so one GEMM makes
// the three projections and the learning-rate gate logits. For mamba wk's
// block holds wg, the output gate's projection (mamba.go).
func (m *Model) fusedQKVG(w map[string]tensorfile.Tensor, pre string,
	mat func(string, ...int) ([]float32, error)) (gpu.Ptr, error) {
	C, nh, ldp := m.size.Hidden, m.size.Heads, m.w.ldp
	wq, e1 := mat(pre+"ttt.wq", C, C)
	wk, e2 := mat(pre+m.secondProjection(), C, C)
	wv, e3 := mat(pre+"ttt.wv", C, C)
	lrw, e4 := mat(pre+"ttt.lr_w", nh, C)
	if err := firstErr(e1, e2, e3, e4); err != nil {
		return 0, err
	}
	f := make([]float32, C*ldp)
	for r := 0; r < C; r++ {
		row := f[r*ldp : (r+1)*ldp]
		copy(row, wq[r*C:(r+1)*C])
		copy(row[C:], wk[r*C:(r+1)*C])
		copy(row[2*C:], wv[r*C:(r+1)*C])
		for h := 0; h < nh; h++ {
			row[3*C+h] = lrw[h*C+r]
		}
	}
	return m.upload(f, true, true)
}

// loadInner uploads layer 0's inner model and the inner-only buffers.
func (m *Model) loadInner(w map[string]tensorfile.Tensor) error {
	iw, err := m.loadInnerW(w, "layers.0.ttt.")
	if err != nil {
		return err
	}
	m.w.layers = []layerW{{inner: iw}}
	cfg, s := m.cfg, m.size
	n := int64(cfg.Batch * s.Heads * cfg.SeqLen)
	A := m.actBytes()
	b := &m.buf
	for _, t := range []struct {
		dst   *gpu.Ptr
		bytes int64
	}{{&b.xq, A * n * int64(s.HeadDim)}, {&b.xk, A * n * int64(s.HeadDim)}, {&b.xv, A * n * int64(s.HeadDim)},
		{&b.gate, 4 * n}, {&b.out, A * n * int64(s.HeadDim)}} {
		if *t.dst, err = m.alloc(t.bytes); err != nil {
			return err
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
