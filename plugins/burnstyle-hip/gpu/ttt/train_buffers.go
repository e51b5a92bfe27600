package ttt

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// train is what the training step adds to a model: the activations its
// forward keeps for the backward (the forward proper reuses one set of
// buffers across layers), the gradient scratch, and the gradients.
type train struct {
	hs      []gpu.Ptr // [2*layers+1] float32 [N, C]: h at each layer's input, after its TTT block, and at the end
	layers  []trainLayer
	xf      gpu.Ptr    // [N, C] act: RMSNorm_final(h), the tied head's input
	dlogits gpu.Ptr    // [N, V] act
	loss    gpu.Ptr    // [N] float32: each row's share of the mean loss
	dh      gpu.Ptr    // [N, C] float32: gradient of the residual stream
	slots   [4]gpu.Ptr // [N, C] act copies of dh at successive block boundaries, the GEMMs' operand
	dtmp    gpu.Ptr    // [N, C] float32: GEMM outputs that feed a norm's backward
	dO      gpu.Ptr    // [N, C] float32 (inner-only: the given [B, nh, L, f] output gradient)
	da      gpu.Ptr    // [N, I] float32
	dgu     [2]gpu.Ptr // [N, 2I] act, by layer parity
	dP      [2]gpu.Ptr // [N, ldp] act, by layer parity: gradient of the fused projection's output
	ov      *overlap   // the backward's two streams (train_overlap.go); nil: one stream
	dq, dk  gpu.Ptr    // [B, nh, L, f] float32, rotated
	dv      gpu.Ptr    // [B, nh, L, f] float32
	dgate   gpu.Ptr    // [B, nh, L] float32
	dstate  gpu.Ptr    // mlp: [B*nh] inner-state gradient scratch of the inner backward
	grads   gradBufs

	mambaPart gpu.Ptr // the mamba backward's column-sum slots (mamba_train.go)
}

// trainLayer is one layer's saved forward activations.
type trainLayer struct {
	x1, xq, xk, xv, o, y, x2, gu, a gpu.Ptr // act: normed inputs, rotated q/k, v, inner output, post-normed, SwiGLU
	gate, trace                     gpu.Ptr // float32 [B, nh, L]; inner state at every mini-batch start

	mamba mambaKept // backbone mamba only
}

// gradBufs are the gradients in the device's layout (the same as the
// weights', so wqkvg's holds wq | wk | wv | lr_w^T), all float32 and carved
// from one allocation so that one memset zeroes them.
type gradBufs struct {
	base             gpu.Ptr
	floats           int64
	embed, finalNorm gpu.Ptr
	layers           []layerW
}

// carver hands out 256-byte aligned float32 regions of one allocation.
type carver struct {
	base gpu.Ptr
	used int64
}

func (c *carver) take(floats int) gpu.Ptr {
	p := c.base.Off(int(c.used), 4)
	c.used += (int64(floats) + 63) / 64 * 64
	return p
}

// innerStateFloats is one (batch, head)'s record in the training trace at
// one mini-batch start, as the forward kernels store it: the inner state,
// and for linear also 8 row statistics a row and Zbar (XB_TRS of
// inner_linear_cl.cu), which the inner backward reads instead of
// exchanging them across its cluster.
func (g geometry) innerStateFloats() int {
	if g.MLP {
		return 2*g.F*g.hidden() + g.hidden() + g.F
	}
	return g.F*g.F + g.F + traceStats(g.MLP, g.KB, g.F)
}

// traceStats is the linear trace's additions per mini-batch of kb rows of
// f: 8 row statistics a row and Zbar.
func traceStats(mlp bool, kb, f int) int {
	if mlp {
		return 0
	}
	return 8*kb + kb*f
}

// gradLayout carves every gradient from c (a nil base only counts).
func (m *Model) gradLayout(c *carver) gradBufs {
	s, nh, f, h, K := m.size, m.size.Heads, m.geo.F, m.geo.hidden(), m.cfg.MiniBatch
	C, I, V := s.Hidden, s.MLP, s.Vocab
	inner := func() innerW {
		iw := innerW{W1: c.take(nh * f * h), b1: c.take(nh * h), lnw: c.take(nh * f), lnb: c.take(nh * f), tokd: c.take(K)}
		if m.geo.MLP {
			iw.W2, iw.b2 = c.take(nh*h*f), c.take(nh*f)
		}
		return iw
	}
	var g gradBufs
	if m.cfg.InnerOnly {
		g.layers = []layerW{{inner: inner()}}
		return g
	}
	g.embed, g.finalNorm = c.take(V*C), c.take(C)
	for l := 0; l < s.Layers; l++ {
		g.layers = append(g.layers, layerW{tttNorm: c.take(C), mlpNorm: c.take(C), postW: c.take(C), postB: c.take(C),
			lrB: c.take(nh), wqkvg: c.take(C * m.w.ldp), wo: c.take(C * C), wgu: c.take(C * 2 * I), wdown: c.take(I * C),
			inner: inner()})
		if m.mamba() {
			g.layers[l].mamba = m.mambaGradLayout(c)
		}
	}
	return g
}

// trainSupported refuses a training step the device cannot run.
func (m *Model) trainSupported() error {
	if !m.geo.Train {
		return nil
	}
	if !m.useBLAS() {
		return fmt.Errorf("gpu: the training step needs cuBLAS for its products (%s)", m.dev.BLAS())
	}
	if need := m.geo.bwdSmemBytes(); need > m.dev.RT.MaxDynSmem {
		return fmt.Errorf("gpu: the %s inner backward kernel at f=%d, mini_batch=%d needs %d bytes of shared memory; %s allows %d per block",
			m.cfg.TTTType, m.geo.F, m.geo.KB, need, m.dev.Info().Name, m.dev.RT.MaxDynSmem)
	}
	if C := m.size.Hidden; C > 8*rowThreads || (!m.cfg.InnerOnly && m.w.ldp-3*C > rowThreads) {
		return fmt.Errorf("gpu: hidden width %d is wider than the backward row kernels take (%d)", C, 8*rowThreads)
	}
	return nil
}

// setupTrain allocates the training step's buffers (after loadFull or
// loadInner, on the worker).
func (m *Model) setupTrain() error {
	cfg, s, A := m.cfg, m.size, m.actBytes()
	N, C, I, V, nh, f := cfg.Batch*cfg.SeqLen, s.Hidden, s.MLP, s.Vocab, s.Heads, m.geo.F
	t := &train{}
	var err error
	get := func(dst *gpu.Ptr, bytes int64) {
		if err == nil {
			*dst, err = m.alloc(bytes)
		}
	}
	head := int64(cfg.Batch * nh * cfg.SeqLen) // rows of [B, nh, L]
	trace := int64(cfg.Batch*nh*(cfg.SeqLen/cfg.MiniBatch)) * int64(m.geo.innerStateFloats()) * 4
	for _, p := range []*gpu.Ptr{&t.dq, &t.dk, &t.dv, &t.dO} {
		get(p, 4*head*int64(f))
	}
	get(&t.dgate, 4*head)
	if m.geo.MLP {
		get(&t.dstate, 4*int64(cfg.Batch*nh*m.geo.innerStateFloats()))
	}
	count := carver{}
	m.gradLayout(&count)
	get(&t.grads.base, 4*count.used)
	if err != nil {
		return err
	}
	cv := carver{base: t.grads.base}
	t.grads = m.gradLayout(&cv)
	t.grads.base, t.grads.floats = cv.base, cv.used
	if cfg.InnerOnly {
		t.layers = make([]trainLayer, 1)
		get(&t.layers[0].trace, trace)
		m.train = t
		return err
	}
	n := int64(N)
	t.hs = make([]gpu.Ptr, 2*s.Layers+1)
	for i := range t.hs {
		get(&t.hs[i], 4*n*int64(C))
	}
	t.layers = make([]trainLayer, s.Layers)
	for l := range t.layers {
		tl := &t.layers[l]
		for _, p := range []*gpu.Ptr{&tl.x1, &tl.xq, &tl.xk, &tl.xv, &tl.o, &tl.y, &tl.x2} {
			get(p, A*n*int64(C))
		}
		get(&tl.gu, A*n*int64(2*I))
		get(&tl.a, A*n*int64(I))
		get(&tl.gate, 4*head)
		get(&tl.trace, trace)
	}
	get(&t.xf, A*n*int64(C))
	get(&t.dlogits, A*n*int64(V))
	get(&t.loss, 4*n)
	get(&t.dh, 4*n*int64(C))
	for i := range t.slots {
		get(&t.slots[i], A*n*int64(C))
	}
	get(&t.dtmp, 4*n*int64(C))
	get(&t.da, 4*n*int64(I))
	for i := range t.dgu {
		get(&t.dgu[i], A*n*int64(2*I))
		get(&t.dP[i], A*n*int64(m.w.ldp))
	}
	if err == nil && m.mamba() {
		err = m.setupMambaTrain(t)
	}
	m.train = t
	if err != nil || m.opt.SerialBackward {
		return err
	}
	return m.setupOverlap()
}

// trainBytes bounds what setupTrain allocates beyond the forward's model
// (Engine.Check's memory estimate): per layer the kept activations and the
// inner-state trace, the gradient scratch, and the gradients (float32).
func trainBytes(cfg ttt.Config, s ttt.Size) int64 {
	a := int64(4)
	if cfg.Dtype == "bfloat16" {
		a = 2
	}
	f, h := int64(s.HeadDim), int64(s.HeadDim)
	if cfg.TTTType == "mlp" {
		h = 4 * f
	}
	state := f*h + h
	if cfg.TTTType == "mlp" {
		state = 2*f*h + h + f
	}
	N, C, I, V := int64(cfg.Batch)*int64(cfg.SeqLen), int64(s.Hidden), int64(s.MLP), int64(s.Vocab)
	heads := int64(cfg.Batch * s.Heads)
	ldp := (3*C + int64(s.Heads) + 7) / 8 * 8
	trace := heads * int64(cfg.SeqLen/cfg.MiniBatch) * (state + int64(traceStats(cfg.TTTType == "mlp", cfg.MiniBatch, s.HeadDim))) * 4
	perLayer := a*N*(7*C+3*I) + 4*N*int64(s.Heads) + trace + 4*N*2*C
	scratch := 4*N*(4*C+I+1) + a*N*(5*C+V+4*I+2*ldp) + 4*N*int64(s.Heads) + 4*heads*state +
		2*gpu.CublasWorkspace // the backward's two streams have a cuBLAS handle each
	grads := 4 * ttt.NumParams(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone)
	// the chunked forward's lanes (wavefront.go): a cuBLAS workspace each
	// and the inner state saved between chunks
	lanes := int64(defaultChunks[cfg.TTTType == "mlp"]) * (gpu.CublasWorkspace + int64(s.Layers)*heads*state*4)
	return int64(s.Layers)*perLayer + 4*N*C + scratch + grads + lanes
}

// readF32 copies n float32 from p to the host.
func (m *Model) readF32(p gpu.Ptr, n int64) ([]float32, error) {
	raw := make([]byte, 4*n)
	if err := m.dev.W.Do(func() error { return m.dev.RT.DtoH(raw, p) }); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// Loss is the last training step's mean next-token cross-entropy.
func (m *Model) Loss() (float64, error) {
	if m.train == nil || m.cfg.InnerOnly {
		return 0, fmt.Errorf("gpu: Loss needs a training-step model of the whole network")
	}
	v, err := m.readF32(m.train.loss, int64(m.cfg.Batch*m.cfg.SeqLen))
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s, err
}
