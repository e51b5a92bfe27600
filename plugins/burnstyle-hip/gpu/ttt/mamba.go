package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The mamba backbone (spec, --backbone mamba) on the GPU path. A layer adds,
// before its TTT block,
//
//	x = rmsnorm_conv(h)       h += conv(x)                          (xb_conv_res)
//
// and inside it the fused projection's second block is the output gate's wg
// (mamba has no wk: one projection serves Q and K), so
//
//	p = x @ [wq | wg | wv | lr_w^T]
//	prep: q = convQ(p_qk), k = convK(p_qk), RoPE; v, gate           (xb_prep_mamba)
//	y = gelu(p_g) * layernorm(o)                                    (xb_layernorm_gate)
//
// with the same buffers and the same single GEMM as the transformer. The
// kernels are in kernels/mamba.cu.
//
// The chunked forward (wavefront.go) takes mamba too. A convolution at a
// chunk's first rows looks 3 positions back, into the previous chunk, whose
// lane may by then have moved on to a later layer and overwritten those rows
// of x and p. So each chunk saves, per layer, the 3 last rows of both
// convolutions' inputs (a halo), records an event once its prep has run, and
// the next chunk of the sequence waits for that event before its conv block
// and reads the halo instead of the rows. Its inner loop already waits for
// the previous chunk's, which comes later in the layer, so the extra edge
// costs little overlap.

// mambaW is one layer's mamba tensors, float32 (bfloat16-rounded in a
// bfloat16 run, as every parameter vector is).
type mambaW struct {
	convNorm, convW, convB gpu.Ptr // the conv block: [C], [C, 4], [C]
	qW, qB, kW, kB         gpu.Ptr // ConvQ and ConvK on the shared projection
}

// convHalo is the chunked forward's state for mamba: for every layer and
// span, the 3 rows the next chunk's convolutions read (the conv block's
// input, then the shared projection's QK columns), and the event saying
// they are written.
type convHalo struct {
	rows  gpu.Ptr     // [layers][spans][2][ConvWidth-1][C] act
	ready [][]uintptr // [layer][span]
}

func (m *Model) mamba() bool { return m.cfg.Backbone == "mamba" }

// loadMambaW uploads layer pre's conv block and Q/K convolutions.
func (m *Model) loadMambaW(w map[string]tensorfile.Tensor, pre string) (mambaW, error) {
	C, kw := m.size.Hidden, ttt.ConvWidth
	var mw mambaW
	var err error
	for _, t := range []struct {
		dst   *gpu.Ptr
		name  string
		shape []int
	}{
		{&mw.convNorm, "conv_norm", []int{C}}, {&mw.convW, "conv_w", []int{C, kw}}, {&mw.convB, "conv_b", []int{C}},
		{&mw.qW, "ttt.conv_q_w", []int{C, kw}}, {&mw.qB, "ttt.conv_q_b", []int{C}},
		{&mw.kW, "ttt.conv_k_w", []int{C, kw}}, {&mw.kB, "ttt.conv_k_b", []int{C}},
	} {
		if *t.dst, err = m.param(w, pre+t.name, t.shape...); err != nil {
			return mw, err
		}
	}
	return mw, nil
}

// secondProjection is the fused projection's second block of C columns.
func (m *Model) secondProjection() string {
	if m.mamba() {
		return "ttt.wg"
	}
	return "ttt.wk"
}

// haloFor returns the span's conv arguments: its first position t0 and end
// t1, where it reads the 3 rows before t0 (prev) and saves its last 3 (save),
// for the conv block (which 0) or the QK convolutions (1). A whole span reads
// and saves nothing: t0 = 0.
func (m *Model) haloFor(l int, sp span, which int) (t0, t1 gpu.I32, prev, save gpu.Ptr) {
	if sp.whole {
		return 0, 0, 0, 0
	}
	ch := m.chunks
	C, A := m.size.Hidden, m.actBytes()
	rows := (ttt.ConvWidth - 1) * C
	at := func(idx int) gpu.Ptr { return ch.halo.rows.Off(((l*len(ch.spans)+idx)*2+which)*rows, A) }
	if sp.c > 0 {
		prev = at(sp.idx - 1)
	}
	if sp.c < len(ch.lanes)-1 {
		save = at(sp.idx)
	}
	return gpu.I32(sp.t0), gpu.I32(sp.t0 + sp.n), prev, save
}

// enqueueConvBlock is h += conv(rmsnorm_conv(h)) on the span's rows; a chunk
// after the first waits for the previous one's halo of this layer first.
func (m *Model) enqueueConvBlock(err *error, l int, sp span) {
	b, mw, C := &m.buf, &m.w.layers[l].mamba, m.size.Hidden
	if !sp.whole && sp.c > 0 && *err == nil {
		*err = m.dev.RT.WaitEvent(m.chunks.halo.ready[l][sp.idx-1])
	}
	m.step(err, "norm", m.rowLaunch("xb_rmsnorm", sp, b.h.Off(sp.r0*C, 4), mw.convNorm, b.x.Off(sp.r0*C, m.actBytes()), gpu.I32(C)))
	t0, t1, prev, save := m.haloFor(l, sp, 0)
	m.step(err, "conv", m.rowLaunch("xb_conv_res", sp, b.x, mw.convW, mw.convB, b.h, gpu.I32(C), gpu.I32(m.cfg.SeqLen),
		gpu.I32(sp.r0), t0, t1, prev, save))
}

// prepMamba is the launch of xb_prep_mamba on the span's rows, then, for a
// chunk that has a successor, the record of its halo event.
func (m *Model) prepMamba(l int, sp span) func() error {
	b, w, mw := &m.buf, &m.w, &m.w.layers[l].mamba
	t0, t1, prev, save := m.haloFor(l, sp, 1)
	launch := m.rowLaunch("xb_prep_mamba", sp, b.p, gpu.I32(w.ldp), w.layers[l].lrB, w.rope, mw.qW, mw.qB, mw.kW, mw.kB,
		b.xq, b.xk, b.xv, b.gate, gpu.I32(m.cfg.SeqLen), gpu.I32(m.size.Heads), gpu.I32(sp.r0), t0, t1, prev, save)
	return func() error {
		if err := launch(); err != nil || save == 0 {
			return err
		}
		return m.dev.RT.Record(m.chunks.halo.ready[l][sp.idx])
	}
}

// postNormGate is post_norm then the output gate on the span's rows: y =
// gelu(x @ wg) * layernorm(o), the gate logits being p's second block.
func (m *Model) postNormGate(l int, sp span) func() error {
	b, lw, C, A := &m.buf, &m.w.layers[l], m.size.Hidden, m.actBytes()
	return m.rowLaunch("xb_layernorm_gate", sp, b.o.Off(sp.r0*C, A), lw.postW, lw.postB,
		b.p.Off(sp.r0*m.w.ldp+C, A), gpu.I32(m.w.ldp), b.y.Off(sp.r0*C, A), gpu.I32(C))
}

// setupHalo allocates the chunked forward's halo rows and events (mamba only).
func (m *Model) setupHalo(ch *chunked) error {
	if !m.mamba() {
		return nil
	}
	if m.cfg.MiniBatch < ttt.ConvWidth-1 {
		// A chunk is whole mini-batches; one shorter than the look-back would
		// need the halo of two chunks back. The kernels' shape checks keep
		// mini-batches at 4 or more, so this is a guard, not a case.
		return fmt.Errorf("gpu: chunked mamba forward needs mini_batch >= %d, got %d", ttt.ConvWidth-1, m.cfg.MiniBatch)
	}
	h := &convHalo{ready: make([][]uintptr, len(m.w.layers))}
	ch.halo = h
	rows := int64(len(m.w.layers)*len(ch.spans)*2*(ttt.ConvWidth-1)) * int64(m.size.Hidden)
	var err error
	if h.rows, err = m.alloc(rows * m.actBytes()); err != nil {
		return err
	}
	for l := range h.ready {
		h.ready[l] = make([]uintptr, len(ch.spans))
		for i := range ch.spans {
			if h.ready[l][i], err = m.dev.RT.NewSyncEvent(); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeHalo destroys the halo's events; its rows are a counted allocation.
func (m *Model) closeHalo(ch *chunked) {
	if ch.halo == nil {
		return
	}
	for _, row := range ch.halo.ready {
		for _, e := range row {
			if e != 0 {
				m.dev.RT.Drv.EventDestroy(e)
			}
		}
	}
}
