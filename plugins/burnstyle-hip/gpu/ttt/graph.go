package ttt

import (
	"fmt"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// graphed says whether Run replays a captured forward.
func (m *Model) graphed() bool {
	return m.dev.RT.Graph != nil && !m.opt.Eager && !m.cfg.InnerOnly
}

// Replays says whether each Run is one replay of the forward captured at
// the first call (else every kernel is launched from the host each call).
func (m *Model) Replays() bool { return m.graphed() }

// runGraph is Run's body for a graphed model: capture at the first call
// (the capture and instantiation are counted in CompileMs, as the
// frameworks' first-call JIT is in theirs), then one replay as one sample
// of the runtime's timing loop (gpu.Sampler).
func (m *Model) runGraph() (float64, error) {
	r := m.dev.RT
	if m.cap == nil {
		if err := m.capture(); err != nil {
			return 0, err
		}
	}
	c := m.cap
	r.Stream = c.Stream // the events (and the hold) go where the replay runs
	defer func() { r.Stream = 0 }()
	ms, err := m.sampler.Sample(func() error { return r.Check("graph launch", r.Graph.Launch(c.Exec, c.Stream)) })
	if err != nil {
		r.Sync()
		return 0, err
	}
	return ms, r.Sync()
}

// capture records one forward into a graph on a stream of its own: the
// flat forward's launches and GEMMs go to that stream (m.base), and the
// chunked forward's lanes fork from and join back to it through events.
func (m *Model) capture() (err error) {
	r, t0 := m.dev.RT, time.Now()
	c := &gpu.Captured{}
	defer func() {
		if err != nil {
			m.destroyCapture(c)
			err = fmt.Errorf("capture the forward as a graph (XBENCH_GPU_GRAPH=0 launches it eagerly): %w", err)
		}
	}()
	if err := r.Check("create capture stream", r.Drv.StreamCreate(&c.Stream, gpu.StreamNonBlocking, 0)); err != nil {
		return err
	}
	if err := m.recordOn(c, m.enqueueCall); err != nil {
		return err
	}
	if err := r.Check("instantiate graph", r.Graph.Instantiate(&c.Exec, c.Graph, m.instantiateFlags())); err != nil {
		return err
	}
	m.cap = c
	m.compileMs += float64(time.Since(t0).Microseconds()) / 1e3
	return nil
}

// instantiateFlags keeps the lanes' stream priorities in the replay of a
// training step with two backward streams (gpu.GraphUseNodePriority), so
// its critical chain wins SMs over the side stream's dW products where
// they meet. That was faster on the H100 while dW products were issued as
// soon as ready; with them held for the inner backward's windows
// (train_overlap.go) it measured even, and stays for a window whose work
// overruns. Other graphs, Options.LaunchPriority and HIP (where the flag is
// untested) keep the driver's default, one priority for the whole graph:
// the forward's lanes ranked by chunk measured slower when the ranks held
// (docs/results/tuning.md#native-ttt-training-step).
func (m *Model) instantiateFlags() uint64 {
	if m.opt.LaunchPriority || m.train == nil || m.train.ov == nil || m.dev.RT.Kind != "cuda" {
		return 0
	}
	return gpu.GraphUseNodePriority
}

// recordOn captures what enqueue sends into c.graph, with c.stream as the
// model's base stream and the cuBLAS handle's stream for its duration.
func (m *Model) recordOn(c *gpu.Captured, enqueue func() error) error {
	if err := m.setBLASStream(c.Stream); err != nil {
		return err
	}
	defer m.setBLASStream(0)
	return m.dev.RT.CaptureInto(c, func() error {
		m.base = c.Stream
		defer func() { m.base = 0 }()
		return enqueue()
	})
}

// setBLASStream points the device's cuBLAS handle at stream (0: the
// default stream) and sets this model's math mode on it, as Run does.
func (m *Model) setBLASStream(stream uintptr) error {
	if !m.useBLAS() {
		return nil
	}
	b := m.dev.RT.BLAS
	if err := b.Check("set stream", b.SetStream(b.H, stream)); err != nil {
		return err
	}
	return b.Check("set math mode", b.SetMathMode(b.H, m.blasMathMode()))
}

// destroyCapture frees what capture made; zero handles are skipped.
func (m *Model) destroyCapture(c *gpu.Captured) { m.dev.RT.DestroyCaptured(c) }
