package ttt

import (
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The chunked forward. A layer's inner loop is a chain of L/K dependent
// mini-batch steps on 12 (B·nh) clusters: 48 of 132 SMs busy for ~0.4 ms
// while the GEMMs wait, twelve times over. But everything else in the model
// is per token and the inner loop is causal, so layer l+1 may start on the
// first tokens while layer l is still walking the last ones. Cut each
// sequence into chunks; item (b, c) runs every layer on its rows, in its own
// stream (a lane per chunk index), and the only edges between lanes are the
// inner state: inner(l, c) waits for inner(l, c-1), which saved W1/b1 for
// it. Work is enqueued by anti-diagonals of (stage, item), so the host feeds
// the device in the order it can run, and earlier chunks get higher stream
// priority: they gate every later one.

// defaultChunks is the chunk count when Options.Chunks is 0, by inner
// model: the fastest measured on an H100 (gpucheck -chunks; the sweep is in
// docs/results/tuning.md#native-ttt-chunks).
//
// The mlp forward is bound by its inner loops (a layer's loop holds 12 SMs), so
// more chunks let more layers' loops run at once; the linear one by its
// GEMMs, whose chunks shrink and multiply past 4.
var defaultChunks = map[bool]int{false: 4, true: 8} // key: mlp

type lane struct {
	stream uintptr
	blas   uintptr // cuBLAS handle bound to stream, with its own workspace
	done   uintptr // the lane's last work of a forward
}

type chunked struct {
	lanes     []lane
	spans     []span
	innerDone [][]uintptr // [layer][span]: that span's inner state is saved
	start     uintptr
	// The inner state carried between chunks, [layers][B][nh] slots of
	// W1 [f][hid] and b1 [hid] (hid = f linear, 4f mlp), and for mlp
	// W2 [hid][f] and b2 [f].
	stateW, stateB   gpu.Ptr
	stateW2, stateB2 gpu.Ptr

	halo *convHalo // mamba: the convolutions' look-back rows between chunks (mamba.go)
}

// chunkCount resolves the chunk count for this model; 1 is the flat forward.
func (m *Model) chunkCount() int {
	n := m.opt.Chunks
	if n == 0 {
		n = defaultChunks[m.geo.MLP]
	}
	if m.cfg.InnerOnly || !(m.geo.cl() || m.geo.MLP) {
		return 1 // the cluster and mlp kernels start mid-sequence and save their state; the others do not
	}
	return max(1, min(n, m.cfg.SeqLen/m.cfg.MiniBatch))
}

// setupChunks makes the lanes, events and state buffers of the chunked
// forward. Runs on the worker after loadFull.
func (m *Model) setupChunks() error {
	n := m.chunkCount()
	if n <= 1 {
		return nil
	}
	r, cfg, s := m.dev.RT, m.cfg, m.size
	ch := &chunked{}
	m.chunks = ch
	nmb := cfg.SeqLen / cfg.MiniBatch
	for b := 0; b < cfg.Batch; b++ {
		for c := 0; c < n; c++ {
			mb0, mb1 := c*nmb/n, (c+1)*nmb/n
			t0 := mb0 * cfg.MiniBatch
			ch.spans = append(ch.spans, span{r0: b*cfg.SeqLen + t0, n: (mb1 - mb0) * cfg.MiniBatch,
				b: b, t0: t0, c: c, idx: len(ch.spans)})
		}
	}
	var err error
	if ch.start, err = r.NewSyncEvent(); err != nil {
		return err
	}
	ch.lanes = make([]lane, n) // zero handles are skipped by closeChunks on failure
	for c := range ch.lanes {
		ln := &ch.lanes[c]
		rank := c
		if m.opt.FlatPriority || m.train != nil { // a training step's replay keeps ranks (graph.go): flat measured faster
			rank = 0
		}
		if ln.stream, err = r.NewStream(rank); err != nil {
			return err
		}
		if ln.done, err = r.NewSyncEvent(); err != nil {
			return err
		}
		if m.useBLAS() {
			if ln.blas, err = m.laneHandle(ln.stream); err != nil {
				return err
			}
		}
	}
	ch.innerDone = make([][]uintptr, len(m.w.layers))
	for l := range ch.innerDone {
		ch.innerDone[l] = make([]uintptr, len(ch.spans))
		for i := range ch.spans {
			if ch.innerDone[l][i], err = r.NewSyncEvent(); err != nil {
				return err
			}
		}
	}
	slots, f, hid := int64(len(m.w.layers)*cfg.Batch*s.Heads), int64(s.HeadDim), int64(m.innerHidden())
	if ch.stateW, err = m.alloc(4 * slots * f * hid); err != nil {
		return err
	}
	if ch.stateB, err = m.alloc(4 * slots * hid); err != nil {
		return err
	}
	if m.geo.MLP {
		if ch.stateW2, err = m.alloc(4 * slots * hid * f); err != nil {
			return err
		}
		if ch.stateB2, err = m.alloc(4 * slots * f); err != nil {
			return err
		}
	}
	return m.setupHalo(ch)
}

// innerHidden is the inner model's hidden width: f (linear) or 4f (mlp).
func (m *Model) innerHidden() int {
	if m.geo.MLP {
		return 4 * m.size.HeadDim
	}
	return m.size.HeadDim
}

// laneHandle is a cuBLAS handle on stream with its own (counted) workspace
// and the model's math mode, so lanes never share a workspace.
func (m *Model) laneHandle(stream uintptr) (uintptr, error) {
	b := m.dev.RT.BLAS
	var h uintptr
	if err := b.Check("create", b.Create(&h)); err != nil {
		return 0, err
	}
	ws, err := m.alloc(gpu.CublasWorkspace)
	if err == nil {
		err = b.Check("set workspace", b.SetWorkspace(h, uint64(ws), gpu.CublasWorkspace))
	}
	if err == nil {
		err = b.Check("set stream", b.SetStream(h, stream))
	}
	if err == nil {
		err = b.Check("set math mode", b.SetMathMode(h, m.blasMathMode()))
	}
	if err != nil {
		b.Destroy(h)
		return 0, err
	}
	return h, nil
}

// enqueueChunked enqueues one chunked forward between work on the default
// stream: every lane waits for what came before, and the default stream
// waits for every lane.
func (m *Model) enqueueChunked() error {
	return m.wavefront(func(st int, sp span) error {
		switch st {
		case 0:
			return m.enqueueEmbed(sp)
		case len(m.w.layers) + 1:
			return m.enqueueHead(sp)
		}
		return m.enqueueLayer(st-1, sp)
	})
}

// wavefront enqueues stage(st, sp) for the stages 0 (embed), 1..layers and
// layers+1 (the head) of every span, each span on its chunk's lane, by
// anti-diagonals; the forward and the training step's forward share it.
func (m *Model) wavefront(stage func(st int, sp span) error) error {
	r, ch := m.dev.RT, m.chunks
	defer m.useLane(lane{})
	if err := r.Record(ch.start); err != nil {
		return err
	}
	for _, ln := range ch.lanes {
		m.useLane(ln)
		if err := r.WaitEvent(ch.start); err != nil {
			return err
		}
	}
	stages := len(m.w.layers) + 2 // embed, the layers, the head
	for d := 0; d < stages+len(ch.spans)-1; d++ {
		for i, sp := range ch.spans {
			st := d - i
			if st < 0 || st >= stages {
				continue
			}
			ln := ch.lanes[sp.c]
			m.useLane(ln)
			err := stage(st, sp)
			if err == nil && st == stages-1 {
				err = r.Record(ln.done)
			}
			if err != nil {
				return fmt.Errorf("chunk %d of sequence %d, stage %d: %w", sp.c, sp.b, st, err)
			}
		}
	}
	m.useLane(lane{}) // the default stream waits for every lane
	for _, ln := range ch.lanes {
		if err := r.WaitEvent(ln.done); err != nil {
			return err
		}
	}
	return nil
}

// useLane sends the launches and GEMMs that follow to ln's stream and cuBLAS
// handle; the zero lane is the base stream (the default one, or the
// capture's) and the device's handle.
func (m *Model) useLane(ln lane) {
	m.dev.RT.Stream, m.laneBLAS = ln.stream, ln.blas
	if ln.stream == 0 {
		m.dev.RT.Stream = m.base
	}
}

// innerIO are an inner loop's inputs and output over the whole batch, and
// (the training forward) its state trace, [B*nh][L/K] slots, or 0.
type innerIO struct{ xq, xk, xv, gate, out, trace gpu.Ptr }

// enqueueInnerChunk runs layer l's inner loop over one chunk of the
// forward's shared buffers.
func (m *Model) enqueueInnerChunk(l int, sp span) error {
	b := &m.buf
	return m.innerChunk(l, sp, innerIO{b.xq, b.xk, b.xv, b.gate, b.o, 0})
}

// innerChunk runs layer l's inner loop over one chunk of io: from the
// layer's weights for the first chunk, else from the state the previous
// chunk saved, which it waits for; a trace gets the chunk's mini-batches'
// states in their slots of the whole sequence's.
func (m *Model) innerChunk(l int, sp span, io innerIO) error {
	r, ch, cfg, s, A := m.dev.RT, m.chunks, m.cfg, m.size, m.actBytes()
	b, iw := &io, &m.w.layers[l].inner
	L, C, nh, f := cfg.SeqLen, s.Hidden, s.Heads, s.HeadDim
	seq, hid := l*cfg.Batch+sp.b, m.innerHidden() // this sequence's state slot of layer l
	slot := innerState{ch.stateW.Off(seq*nh*f*hid, 4), ch.stateB.Off(seq*nh*hid, 4),
		ch.stateW2.Off(seq*nh*hid*f, 4), ch.stateB2.Off(seq*nh*f, 4)}
	from := innerState{iw.W1, iw.b1, iw.W2, iw.b2}
	if sp.c > 0 {
		if err := r.WaitEvent(ch.innerDone[l][sp.idx-1]); err != nil {
			return err
		}
		from = slot
	}
	last := sp.c == len(ch.lanes)-1
	var save innerState
	if !last {
		save = slot
	}
	in := sp.b*nh*L*f + sp.t0*f // element offset of the chunk in [B, nh, L, f]
	xq, xk, xv := b.xq.Off(in, A), b.xk.Off(in, A), b.xv.Off(in, A)
	gate, out := b.gate.Off(sp.b*nh*L+sp.t0, 4), b.out.Off(sp.b*L*C+sp.t0*C, A)
	var trace gpu.Ptr
	if b.trace != 0 {
		nmb := L / cfg.MiniBatch
		trace = b.trace.Off((sp.b*nh*nmb+sp.t0/cfg.MiniBatch)*m.geo.innerStateFloats(), 4)
	}
	var err error
	if m.geo.MLP {
		err = m.launchMLPInner(1, xq, xk, xv, gate, from, iw, out, int64(L*C), int64(f), int64(C), 0, save, sp.n/cfg.MiniBatch, trace)
	} else {
		err = m.launchLinearInner(1, xq, xk, xv, gate, from.W1, from.b1, iw, out,
			int64(L*C), int64(f), int64(C), 0, save.W1, save.b1, sp.n/cfg.MiniBatch, trace)
	}
	if err != nil || last {
		return err
	}
	return r.Record(ch.innerDone[l][sp.idx])
}

// closeChunks releases the lanes and events; the state buffers and
// workspaces are counted allocations that Close frees.
func (m *Model) closeChunks() {
	ch := m.chunks
	if ch == nil {
		return
	}
	r := m.dev.RT
	for _, ln := range ch.lanes {
		if ln.blas != 0 {
			r.BLAS.Destroy(ln.blas)
		}
		if ln.done != 0 {
			r.Drv.EventDestroy(ln.done)
		}
		if ln.stream != 0 {
			r.Drv.StreamDestroy(ln.stream)
		}
	}
	for _, row := range ch.innerDone {
		for _, e := range row {
			if e != 0 {
				r.Drv.EventDestroy(e)
			}
		}
	}
	if ch.start != 0 {
		r.Drv.EventDestroy(ch.start)
	}
	m.closeHalo(ch)
	m.chunks = nil
}
