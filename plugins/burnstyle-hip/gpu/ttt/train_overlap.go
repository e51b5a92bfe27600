package ttt

import "github.com/xbench/xbench/plugins/burnstyle-hip/gpu"

// Two streams for the backward. Half of its GEMM work, the weight
// gradients dW = X^T dY (and the tied head's dembed), is off the critical
// path: nothing in the step reads a dW. The chain that is on it (dX = dY W^T,
// the row kernels, and each layer's inner backward, which holds 12 of 132
// SMs for its ~1 ms while the rest idle) runs on a high-priority stream
// (crit); the dW products go to a low-priority one (side) as soon as their
// operands exist, and fill the SMs the chain leaves idle. At 125m float32
// that is ~10 ms of dW GEMMs that can hide under ~10 ms of inner backward
// and the chain's own narrow GEMMs, instead of adding to them.
//
// But a dW product issued as soon as its operands exist runs beside the
// chain's own full-width GEMMs, not beside the inner backward: on the H100
// (gpucheck -steptrace, results/h100-ttt-step) the side stream was busy for
// 8% of each inner backward and the chain's kernels waited for SMs held by
// its long-running GEMM blocks (priority does not preempt a running block).
// So side work is held back to a window: it is issued when the chain
// reaches an inner backward (the event after the layernorm backward), so
// both become ready at once and, the chain's priority being higher, the
// inner backward takes its 12 SMs first and the dW products the rest. The
// tied head's dembed (~2.5 ms, longer than a window) is cut by rows into
// parts spread over the first windows, and the gradients are zeroed on the
// side stream beside the forward.
//
// The side stream reads gradient buffers the chain rewrites for the next
// layer (dh's act copy, dgu, dP), so those are rings, and before the chain
// writes a buffer it waits for the side's last read of it (lastRead). A
// profile runs everything on one stream, so its events time each part.

type overlap struct {
	crit, side lane
	start      uintptr   // the base stream's work before the backward
	begin      uintptr   // the base stream's work before the step
	zeroed     uintptr   // the side stream has zeroed the gradients
	pool       []uintptr // ordering events, handed out in order each call
	used       int
	lastRead   map[gpu.Ptr]uintptr // buffer -> event after the side's last read of it
	held       []sideJob           // side work waiting for its window
}

// sideJob is side work held for window (the index of the inner backward
// whose start issues it) and the buffers it reads besides saved activations.
type sideJob struct {
	window int
	reads  []gpu.Ptr
	f      func() error
}

// setupOverlap makes the two lanes and the event pool (full model only).
func (m *Model) setupOverlap() error {
	r := m.dev.RT
	o := &overlap{lastRead: map[gpu.Ptr]uintptr{}}
	m.train.ov = o
	var err error
	for _, x := range []struct {
		ln   *lane
		rank int
	}{{&o.crit, 0}, {&o.side, 1 << 10}} { // 0: the highest priority; a large rank clamps to the lowest
		if x.ln.stream, err = r.NewStream(x.rank); err != nil {
			return err
		}
		if x.ln.blas, err = m.laneHandle(x.ln.stream); err != nil {
			return err
		}
		if x.ln.done, err = r.NewSyncEvent(); err != nil {
			return err
		}
	}
	if o.start, err = r.NewSyncEvent(); err != nil {
		return err
	}
	if o.zeroed, err = r.NewSyncEvent(); err != nil {
		return err
	}
	if o.begin, err = r.NewSyncEvent(); err != nil {
		return err
	}
	// two events a sideWork: one a window (layers + the flush), or one a
	// dW product and head part with Options.SideASAP
	o.pool = make([]uintptr, 4*len(m.w.layers)+2*m.headParts()+8)
	for i := range o.pool {
		if o.pool[i], err = r.NewSyncEvent(); err != nil {
			return err
		}
	}
	return nil
}

// closeOverlap releases the lanes and events (Close; zero handles skipped).
func (m *Model) closeOverlap() {
	if m.train == nil || m.train.ov == nil {
		return
	}
	r, o := m.dev.RT, m.train.ov
	for _, ln := range []lane{o.crit, o.side} {
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
	for _, e := range append(o.pool, o.start, o.zeroed, o.begin) {
		if e != 0 {
			r.Drv.EventDestroy(e)
		}
	}
	m.train.ov = nil
}

// defaultHeadParts spreads the ~2.5 ms dembed (125m float32, H100) over
// six inner-backward windows of ~1.6 ms, each ~0.9 ms full of the layers'
// own dW products.
const defaultHeadParts = 6

// headParts is the number of row parts of the tied head's dembed.
func (m *Model) headParts() int {
	if m.opt.HeadParts > 0 {
		return min(m.opt.HeadParts, m.size.Vocab)
	}
	return defaultHeadParts
}

// overlapping says whether this backward uses the two streams.
func (m *Model) overlapping() bool { return m.train.ov != nil && m.prof == nil }

func (o *overlap) next() uintptr {
	e := o.pool[o.used]
	o.used++
	return e
}

// forkBackward starts the backward on the critical stream after the base
// stream's work.
func (m *Model) forkBackward() error {
	if !m.overlapping() {
		return nil
	}
	r, o := m.dev.RT, m.train.ov
	o.used = 0
	o.held = o.held[:0]
	clear(o.lastRead)
	m.useLane(lane{})
	if err := r.Record(o.start); err != nil {
		return err
	}
	m.useLane(o.crit)
	return r.WaitEvent(o.start)
}

// zeroGrads zeroes the gradients, called before the forward: on the side
// stream, first, where the backward has two (its dW products, which
// overwrite, follow there; the chain's first accumulation waits for it in
// gradsZeroed), else inline.
func (m *Model) zeroGrads() error {
	g := &m.train.grads
	if !m.overlapping() {
		return m.zeroF32(g.base, g.floats)()
	}
	r, o := m.dev.RT, m.train.ov
	m.useLane(lane{})
	if err := r.Record(o.begin); err != nil {
		return err
	}
	m.useLane(o.side)
	defer m.useLane(lane{})
	if err := r.WaitEvent(o.begin); err != nil {
		return err
	}
	if err := m.zeroF32(g.base, g.floats)(); err != nil {
		return err
	}
	return r.Record(o.zeroed)
}

// gradsZeroed makes the chain wait for zeroGrads before it first adds into
// a gradient.
func (m *Model) gradsZeroed() error {
	if !m.overlapping() {
		return nil
	}
	return m.dev.RT.WaitEvent(m.train.ov.zeroed)
}

// sideAt holds f, which reads the buffers reads (besides saved
// activations), for window: openWindow(window) issues it on the side
// stream. Without two streams f runs now.
func (m *Model) sideAt(window int, reads []gpu.Ptr, f func() error) error {
	if !m.overlapping() {
		return f()
	}
	o := m.train.ov
	if m.opt.SideASAP { // issued as soon as its operands exist (before windows)
		return m.sideWork(reads, f)
	}
	o.held = append(o.held, sideJob{window, reads, f})
	return nil
}

// openWindow issues the held side work of windows up to w on the side
// stream, after everything the critical stream has so far: called just
// before the inner backward of window w is launched (w past the last one
// flushes the rest before the join).
func (m *Model) openWindow(w int) error {
	if !m.overlapping() {
		return nil
	}
	o := m.train.ov
	var now, later []sideJob
	for _, j := range o.held {
		if j.window <= w {
			now = append(now, j)
		} else {
			later = append(later, j)
		}
	}
	if len(now) == 0 {
		return nil
	}
	o.held = later
	var reads []gpu.Ptr
	for _, j := range now {
		reads = append(reads, j.reads...)
	}
	return m.sideWork(reads, func() error {
		for _, j := range now {
			if err := j.f(); err != nil {
				return err
			}
		}
		return nil
	})
}

// joinBackward makes the base stream wait for both lanes; work enqueued
// after it runs on the base stream.
func (m *Model) joinBackward() error {
	if !m.overlapping() {
		return nil
	}
	r, o := m.dev.RT, m.train.ov
	for _, ln := range []lane{o.crit, o.side} {
		m.useLane(ln)
		if err := r.Record(ln.done); err != nil {
			return err
		}
	}
	m.useLane(lane{})
	for _, ln := range []lane{o.crit, o.side} {
		if err := r.WaitEvent(ln.done); err != nil {
			return err
		}
	}
	return nil
}

// sideWork enqueues f, which reads the buffers reads (besides saved
// activations), on the side stream after everything the critical stream
// has so far, and records its reads for willWrite.
func (m *Model) sideWork(reads []gpu.Ptr, f func() error) error {
	if !m.overlapping() {
		return f()
	}
	r, o := m.dev.RT, m.train.ov
	ready := o.next()
	if err := r.Record(ready); err != nil {
		return err
	}
	m.useLane(o.side)
	defer m.useLane(o.crit)
	if err := r.WaitEvent(ready); err != nil {
		return err
	}
	if err := f(); err != nil {
		return err
	}
	done := o.next()
	for _, b := range reads {
		o.lastRead[b] = done
	}
	return r.Record(done)
}

// willWrite makes the critical stream wait until the side stream has read
// what it needed from each of bufs.
func (m *Model) willWrite(bufs ...gpu.Ptr) error {
	if !m.overlapping() {
		return nil
	}
	r, o := m.dev.RT, m.train.ov
	for _, b := range bufs {
		if e, ok := o.lastRead[b]; ok {
			if err := r.WaitEvent(e); err != nil {
				return err
			}
			delete(o.lastRead, b)
		}
	}
	return nil
}
