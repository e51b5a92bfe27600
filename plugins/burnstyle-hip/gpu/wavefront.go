package gpu

import "fmt"

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

// defaultChunks is the chunk count when Options.Chunks is 0: 1, the flat
// forward, because the chunked one is verified (emulator) but not yet timed
// on a GPU; results/h100 measured the flat forward. `gpucheck -chunks` is
// the measurement that would pick a count (FLOOR.md, "What would close the
// gap").
const defaultChunks = 1

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
	stateW    devPtr // [layers][B][nh][f][f] inner W1 carried between chunks
	stateB    devPtr // [layers][B][nh][f]
}

// chunkCount resolves the chunk count for this model; 1 is the flat forward.
func (m *Model) chunkCount() int {
	n := m.opt.Chunks
	if n == 0 {
		n = defaultChunks
	}
	if m.cfg.InnerOnly || !m.geo.cl() {
		return 1 // only the cluster kernel starts mid-sequence and saves its state
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
	r, cfg, s := m.dev.rt, m.cfg, m.size
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
	if ch.start, err = r.newSyncEvent(); err != nil {
		return err
	}
	ch.lanes = make([]lane, n) // zero handles are skipped by closeChunks on failure
	for c := range ch.lanes {
		ln := &ch.lanes[c]
		rank := c
		if m.opt.FlatPriority {
			rank = 0
		}
		if ln.stream, err = r.newStream(rank); err != nil {
			return err
		}
		if ln.done, err = r.newSyncEvent(); err != nil {
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
			if ch.innerDone[l][i], err = r.newSyncEvent(); err != nil {
				return err
			}
		}
	}
	per := int64(cfg.Batch * s.Heads * s.HeadDim)
	if ch.stateW, err = m.alloc(4 * int64(len(m.w.layers)) * per * int64(s.HeadDim)); err != nil {
		return err
	}
	ch.stateB, err = m.alloc(4 * int64(len(m.w.layers)) * per)
	return err
}

// laneHandle is a cuBLAS handle on stream with its own (counted) workspace
// and the model's math mode, so lanes never share a workspace.
func (m *Model) laneHandle(stream uintptr) (uintptr, error) {
	b := m.dev.rt.blas
	var h uintptr
	if err := b.check("create", b.create(&h)); err != nil {
		return 0, err
	}
	ws, err := m.alloc(cublasWorkspace)
	if err == nil {
		err = b.check("set workspace", b.setWorkspace(h, uint64(ws), cublasWorkspace))
	}
	if err == nil {
		err = b.check("set stream", b.setStream(h, stream))
	}
	if err == nil {
		err = b.check("set math mode", b.setMathMode(h, m.blasMathMode()))
	}
	if err != nil {
		b.destroy(h)
		return 0, err
	}
	return h, nil
}

// enqueueChunked enqueues one chunked forward between work on the default
// stream: every lane waits for what came before, and the default stream
// waits for every lane.
func (m *Model) enqueueChunked() error {
	r, ch := m.dev.rt, m.chunks
	defer m.useLane(lane{})
	if err := r.record(ch.start); err != nil {
		return err
	}
	for _, ln := range ch.lanes {
		m.useLane(ln)
		if err := r.waitEvent(ch.start); err != nil {
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
			var err error
			switch st {
			case 0:
				err = m.enqueueEmbed(sp)
			case stages - 1:
				if err = m.enqueueHead(sp); err == nil {
					err = r.record(ln.done)
				}
			default:
				err = m.enqueueLayer(st-1, sp)
			}
			if err != nil {
				return fmt.Errorf("chunk %d of sequence %d, stage %d: %w", sp.c, sp.b, st, err)
			}
		}
	}
	m.useLane(lane{}) // the default stream waits for every lane
	for _, ln := range ch.lanes {
		if err := r.waitEvent(ln.done); err != nil {
			return err
		}
	}
	return nil
}

// useLane sends the launches and GEMMs that follow to ln's stream and cuBLAS
// handle; the zero lane is the default stream and the device's handle.
func (m *Model) useLane(ln lane) { m.dev.rt.stream, m.laneBLAS = ln.stream, ln.blas }

// enqueueInnerChunk runs layer l's inner loop over one chunk: from the
// layer's weights for the first chunk, else from the state the previous
// chunk saved, which it waits for.
func (m *Model) enqueueInnerChunk(l int, sp span) error {
	r, ch, cfg, s, A := m.dev.rt, m.chunks, m.cfg, m.size, m.actBytes()
	b, iw := &m.buf, &m.w.layers[l].inner
	L, C, nh, f := cfg.SeqLen, s.Hidden, s.Heads, s.HeadDim
	seq := l*cfg.Batch + sp.b // this sequence's state slot of layer l
	sW, sB := ch.stateW.off(seq*nh*f*f, 4), ch.stateB.off(seq*nh*f, 4)
	W1, b1 := iw.W1, iw.b1
	if sp.c > 0 {
		if err := r.waitEvent(ch.innerDone[l][sp.idx-1]); err != nil {
			return err
		}
		W1, b1 = sW, sB
	}
	last := sp.c == len(ch.lanes)-1
	var saveW, saveB devPtr
	if !last {
		saveW, saveB = sW, sB
	}
	in := sp.b*nh*L*f + sp.t0*f // element offset of the chunk in [B, nh, L, f]
	err := m.launchLinearInner(1, b.xq.off(in, A), b.xk.off(in, A), b.xv.off(in, A),
		b.gate.off(sp.b*nh*L+sp.t0, 4), W1, b1, iw, b.o.off(sp.b*L*C+sp.t0*C, A),
		int64(L*C), int64(f), int64(C), 0, saveW, saveB, sp.n/cfg.MiniBatch, 0)
	if err != nil || last {
		return err
	}
	return r.record(ch.innerDone[l][sp.idx])
}

// closeChunks releases the lanes and events; the state buffers and
// workspaces are counted allocations that Close frees.
func (m *Model) closeChunks() {
	ch := m.chunks
	if ch == nil {
		return
	}
	r := m.dev.rt
	for _, ln := range ch.lanes {
		if ln.blas != 0 {
			r.blas.destroy(ln.blas)
		}
		if ln.done != 0 {
			r.drv.eventDestroy(ln.done)
		}
		if ln.stream != 0 {
			r.drv.streamDestroy(ln.stream)
		}
	}
	for _, row := range ch.innerDone {
		for _, e := range row {
			if e != 0 {
				r.drv.eventDestroy(e)
			}
		}
	}
	if ch.start != 0 {
		r.drv.eventDestroy(ch.start)
	}
	m.chunks = nil
}
