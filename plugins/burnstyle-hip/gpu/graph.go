package gpu

import (
	"fmt"
	"time"
)

// A forward is a few hundred launches and cuBLAS calls (more when chunked:
// every layer of every chunk, plus the events between lanes), each a purego
// call into the driver that costs the host microseconds. Where the device
// finishes the work faster than the host sends it, device events time the
// host: a bfloat16 forward is ~4.5 ms of GPU work. So the forward is captured
// once, at its first call, into a graph (CUDA graphs, HIP graphs) and every
// call replays it with one launch; the device executes exactly the captured
// kernels and GEMMs with the same arguments, so the work per call is
// unchanged. Options.Eager (XBENCH_GPU_GRAPH=0) sends every launch from the
// host instead, for comparison.

// graphAPI is stream capture and graph replay, the same shapes in the CUDA
// driver and HIP. Optional: a driver without it leaves rt.graph nil, and the
// forward is launched eagerly.
type graphAPI struct {
	begin       func(stream uintptr, mode int32) int32
	end         func(stream uintptr, graph *uintptr) int32
	instantiate func(exec *uintptr, graph uintptr, flags uint64) int32
	launch      func(exec, stream uintptr) int32
	execDestroy func(exec uintptr) int32
	destroy     func(graph uintptr) int32
}

type graphNames [6]string

var (
	cudaGraphNames = graphNames{"cuStreamBeginCapture_v2|cuStreamBeginCapture", "cuStreamEndCapture",
		"cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy", "cuGraphDestroy"}
	hipGraphNames = graphNames{"hipStreamBeginCapture", "hipStreamEndCapture",
		"hipGraphInstantiateWithFlags", "hipGraphLaunch", "hipGraphExecDestroy", "hipGraphDestroy"}
)

func (g *graphAPI) table(n graphNames) map[string]any {
	ptrs := []any{&g.begin, &g.end, &g.instantiate, &g.launch, &g.execDestroy, &g.destroy}
	t := make(map[string]any, len(n))
	for i, name := range n {
		t[name] = ptrs[i]
	}
	return t
}

// bindGraphs sets r.graph when the library has every graph call.
func (r *rt) bindGraphs(lib uintptr, path string, names graphNames) {
	var g graphAPI
	if bind(lib, path, g.table(names)) == nil {
		r.graph = &g
	}
}

const (
	captureThreadLocal = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, hipStreamCaptureModeThreadLocal
	streamNonBlocking  = 1 // CU_STREAM_NON_BLOCKING, hipStreamNonBlocking
)

// captured is a model's forward as an instantiated graph, replayed on stream.
type captured struct {
	stream, graph, exec uintptr
}

// graphed says whether Run replays a captured forward.
func (m *Model) graphed() bool {
	return m.dev.rt.graph != nil && !m.opt.Eager && !m.cfg.InnerOnly
}

// Replays says whether each Run is one replay of the forward captured at
// the first call (else every kernel is launched from the host each call).
func (m *Model) Replays() bool { return m.graphed() }

// runGraph is Run's body for a graphed model: capture at the first call
// (the capture and instantiation are counted in CompileMs, as the
// frameworks' first-call JIT is in theirs), then one replay between the two
// timing events.
func (m *Model) runGraph() (float64, error) {
	r := m.dev.rt
	if m.cap == nil {
		if err := m.capture(); err != nil {
			return 0, err
		}
	}
	c := m.cap
	if err := r.check("event record", r.drv.eventRecord(m.ev[0], c.stream)); err != nil {
		return 0, err
	}
	if err := r.check("graph launch", r.graph.launch(c.exec, c.stream)); err != nil {
		r.sync()
		return 0, err
	}
	if err := r.check("event record", r.drv.eventRecord(m.ev[1], c.stream)); err != nil {
		return 0, err
	}
	ms, err := r.elapsedMs(m.ev[0], m.ev[1])
	if err != nil {
		return 0, err
	}
	return ms, r.sync()
}

// capture records one forward into a graph on a stream of its own: the
// flat forward's launches and GEMMs go to that stream (m.base), and the
// chunked forward's lanes fork from and join back to it through events.
func (m *Model) capture() (err error) {
	r, t0 := m.dev.rt, time.Now()
	c := &captured{}
	defer func() {
		if err != nil {
			m.destroyCapture(c)
			err = fmt.Errorf("capture the forward as a graph (XBENCH_GPU_GRAPH=0 launches it eagerly): %w", err)
		}
	}()
	if err := r.check("create capture stream", r.drv.streamCreate(&c.stream, streamNonBlocking, 0)); err != nil {
		return err
	}
	if err := m.recordOn(c, m.enqueueCall); err != nil {
		return err
	}
	if err := r.check("instantiate graph", r.graph.instantiate(&c.exec, c.graph, 0)); err != nil {
		return err
	}
	m.cap = c
	m.compileMs += float64(time.Since(t0).Microseconds()) / 1e3
	return nil
}

// recordOn captures what enqueue sends into c.graph, with c.stream as the
// model's base stream and the cuBLAS handle's stream for its duration.
func (m *Model) recordOn(c *captured, enqueue func() error) error {
	if err := m.setBLASStream(c.stream); err != nil {
		return err
	}
	defer m.setBLASStream(0)
	return m.dev.rt.captureInto(c, func() error {
		m.base = c.stream
		defer func() { m.base = 0 }()
		return enqueue()
	})
}

// captureInto captures what enqueue sends into c.graph: r.stream is c.stream
// for its duration, so launches and events follow it.
func (r *rt) captureInto(c *captured, enqueue func() error) error {
	if err := r.check("begin capture", r.graph.begin(c.stream, captureThreadLocal)); err != nil {
		return err
	}
	r.stream = c.stream
	errEnqueue := enqueue()
	r.stream = 0
	errEnd := r.check("end capture", r.graph.end(c.stream, &c.graph))
	if errEnqueue != nil {
		return errEnqueue
	}
	return errEnd
}

// captureCall is one library call (the standalone GEMM's, for --cuda-graph)
// captured on a stream of its own and instantiated, the device's cuBLAS
// handle on that stream meanwhile; replay it with r.graph.launch(c.exec,
// c.stream) and free it with r.destroyCaptured.
func (r *rt) captureCall(enqueue func() error) (c *captured, err error) {
	if r.graph == nil {
		return nil, fmt.Errorf("--cuda-graph: this %s driver has no stream capture", r.kind)
	}
	c = &captured{}
	defer func() {
		if err != nil {
			r.destroyCaptured(c)
			c = nil
		}
	}()
	if err := r.check("create capture stream", r.drv.streamCreate(&c.stream, streamNonBlocking, 0)); err != nil {
		return nil, err
	}
	if b := r.blas; b != nil {
		if err := b.check("set stream", b.setStream(b.h, c.stream)); err != nil {
			return nil, err
		}
		defer b.setStream(b.h, 0)
	}
	if err := r.captureInto(c, enqueue); err != nil {
		return nil, err
	}
	return c, r.check("instantiate graph", r.graph.instantiate(&c.exec, c.graph, 0))
}

// setBLASStream points the device's cuBLAS handle at stream (0: the
// default stream) and sets this model's math mode on it, as Run does.
func (m *Model) setBLASStream(stream uintptr) error {
	if !m.useBLAS() {
		return nil
	}
	b := m.dev.rt.blas
	if err := b.check("set stream", b.setStream(b.h, stream)); err != nil {
		return err
	}
	return b.check("set math mode", b.setMathMode(b.h, m.blasMathMode()))
}

// destroyCapture frees what capture made; zero handles are skipped.
func (m *Model) destroyCapture(c *captured) { m.dev.rt.destroyCaptured(c) }

// destroyCaptured frees a capture's graph, instance and stream; zero
// handles are skipped.
func (r *rt) destroyCaptured(c *captured) {
	if c.exec != 0 {
		r.graph.execDestroy(c.exec)
	}
	if c.graph != 0 {
		r.graph.destroy(c.graph)
	}
	if c.stream != 0 {
		r.drv.streamDestroy(c.stream)
	}
}
