package gpu

import (
	"fmt"
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
	Instantiate func(exec *uintptr, graph uintptr, flags uint64) int32
	Launch      func(exec, stream uintptr) int32
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
	ptrs := []any{&g.begin, &g.end, &g.Instantiate, &g.Launch, &g.execDestroy, &g.destroy}
	t := make(map[string]any, len(n))
	for i, name := range n {
		t[name] = ptrs[i]
	}
	return t
}

// bindGraphs sets r.graph when the library has every graph call.
func (r *Runtime) bindGraphs(lib uintptr, path string, names graphNames) {
	var g graphAPI
	if bind(lib, path, g.table(names)) == nil {
		r.Graph = &g
	}
}

const (
	// GraphUseNodePriority (CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY,
	// hipGraphInstantiateFlagUseNodePriority) runs each kernel node at the
	// priority its stream had when it was captured. Without it the whole
	// graph runs at its launch stream's priority, so lanes made with
	// different priorities (the chunked forward's, the backward's critical
	// and side streams) compete as equals.
	GraphUseNodePriority = 8
	captureThreadLocal   = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, hipStreamCaptureModeThreadLocal
	StreamNonBlocking    = 1 // CU_STREAM_NON_BLOCKING, hipStreamNonBlocking
)

// Captured is a model's forward as an instantiated graph, replayed on stream.
type Captured struct {
	Stream, Graph, Exec uintptr
}

// CaptureInto captures what enqueue sends into c.graph: r.stream is c.stream
// for its duration, so launches and events follow it.
func (r *Runtime) CaptureInto(c *Captured, enqueue func() error) error {
	if err := r.Check("begin capture", r.Graph.begin(c.Stream, captureThreadLocal)); err != nil {
		return err
	}
	r.Stream = c.Stream
	errEnqueue := enqueue()
	r.Stream = 0
	errEnd := r.Check("end capture", r.Graph.end(c.Stream, &c.Graph))
	if errEnqueue != nil {
		return errEnqueue
	}
	return errEnd
}

// CaptureCall is one library call (the standalone GEMM's, for --cuda-graph)
// captured on a stream of its own and instantiated, the device's cuBLAS
// handle on that stream meanwhile; replay it with r.graph.launch(c.exec,
// c.stream) and free it with r.DestroyCaptured.
func (r *Runtime) CaptureCall(enqueue func() error) (c *Captured, err error) {
	if r.Graph == nil {
		return nil, fmt.Errorf("--cuda-graph: this %s driver has no stream capture", r.Kind)
	}
	c = &Captured{}
	defer func() {
		if err != nil {
			r.DestroyCaptured(c)
			c = nil
		}
	}()
	if err := r.Check("create capture stream", r.Drv.StreamCreate(&c.Stream, StreamNonBlocking, 0)); err != nil {
		return nil, err
	}
	if b := r.BLAS; b != nil {
		if err := b.Check("set stream", b.SetStream(b.H, c.Stream)); err != nil {
			return nil, err
		}
		defer b.SetStream(b.H, 0)
	}
	if err := r.CaptureInto(c, enqueue); err != nil {
		return nil, err
	}
	return c, r.Check("instantiate graph", r.Graph.Instantiate(&c.Exec, c.Graph, 0))
}

// DestroyCaptured frees a capture's graph, instance and stream; zero
// handles are skipped.
func (r *Runtime) DestroyCaptured(c *Captured) {
	if c.Exec != 0 {
		r.Graph.execDestroy(c.Exec)
	}
	if c.Graph != 0 {
		r.Graph.destroy(c.Graph)
	}
	if c.Stream != 0 {
		r.Drv.StreamDestroy(c.Stream)
	}
}
