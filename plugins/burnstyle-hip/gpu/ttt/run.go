package ttt

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// SetTokens copies the [B, L] token ids to the device.
func (m *Model) SetTokens(tokens []int32) error {
	if m.cfg.InnerOnly {
		return fmt.Errorf("gpu: SetTokens on an inner-only model; use SetInnerInputs")
	}
	n := m.cfg.Batch * m.cfg.SeqLen
	if len(tokens) != n {
		return fmt.Errorf("gpu: %d tokens, want batch*seq_len = %d", len(tokens), n)
	}
	b := make([]byte, 4*n)
	for i, t := range tokens {
		if t < 0 || int(t) >= m.size.Vocab {
			return fmt.Errorf("gpu: token %d at %d outside vocabulary [0, %d)", t, i, m.size.Vocab)
		}
		binary.LittleEndian.PutUint32(b[4*i:], uint32(t))
	}
	err := m.dev.W.Do(func() error { return m.dev.RT.HtoD(m.buf.tokens, b) })
	m.haveInput = err == nil
	return err
}

// SetInnerInputs copies an inner-only run's xq, xk, xv [B, nh, L, f] (rotated)
// and gate [B, nh, L] (after the sigmoid) to the device; for an inner-only
// training step also dout [B, nh, L, f], the gradient of its loss with
// respect to out.
func (m *Model) SetInnerInputs(in map[string]tensorfile.Tensor) error {
	if !m.cfg.InnerOnly {
		return fmt.Errorf("gpu: SetInnerInputs on a forward model; use SetTokens")
	}
	B, nh, L, f := m.cfg.Batch, m.size.Heads, m.cfg.SeqLen, m.size.HeadDim
	type item struct {
		name  string
		dst   gpu.Ptr
		shape []int
		act   bool
	}
	err := m.dev.W.Do(func() error {
		for _, it := range []item{{"xq", m.buf.xq, []int{B, nh, L, f}, true}, {"xk", m.buf.xk, []int{B, nh, L, f}, true},
			{"xv", m.buf.xv, []int{B, nh, L, f}, true}, {"gate", m.buf.gate, []int{B, nh, L}, false}} {
			v, err := host(in, it.name, it.shape...)
			if err != nil {
				return fmt.Errorf("inner inputs: %w", err)
			}
			if err := m.dev.RT.HtoD(it.dst, m.encode(v, it.act)); err != nil {
				return err
			}
		}
		if m.train == nil {
			return nil
		}
		// The inner-only training step's loss is sum(out * dout).
		v, err := host(in, "dout", B, nh, L, f)
		if err != nil {
			return fmt.Errorf("inner inputs: %w", err)
		}
		return m.dev.RT.HtoD(m.train.dO, m.encode(v, false))
	})
	m.haveInput = err == nil
	return err
}

// encode is v as device bytes: the act type when act, else float32.
func (m *Model) encode(v []float32, act bool) []byte {
	if act && m.geo.BF16 {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], gpu.ToBF16(x))
		}
		return b
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Run performs one call and returns its device time, one sample of the
// runtime's timing loop (gpu.Sampler: device events, behind a stream hold
// where the driver has one); it waits for the call to finish.
func (m *Model) Run() (float64, error) {
	if !m.haveInput {
		return 0, fmt.Errorf("gpu: Run before inputs were set")
	}
	var ms float64
	if m.graphed() {
		err := m.dev.W.Do(func() (err error) {
			ms, err = m.runGraph()
			return err
		})
		return ms, err
	}
	err := m.dev.W.Do(func() error {
		r := m.dev.RT
		if m.useBLAS() {
			if err := r.BLAS.Check("set math mode", r.BLAS.SetMathMode(r.BLAS.H, m.blasMathMode())); err != nil {
				return err
			}
		}
		enqueue := func() error {
			if m.train != nil {
				return m.enqueueTrain()
			}
			if m.cfg.InnerOnly {
				s := m.size
				L, f := int64(m.cfg.SeqLen), int64(s.HeadDim)
				return m.enqueueInner(&m.w.layers[0].inner, m.buf.out, int64(s.Heads)*L*f, L*f, f, 0)
			}
			return m.enqueueForward()
		}
		var err error
		if ms, err = m.sampler.Sample(enqueue); err != nil {
			r.Sync()
			return err
		}
		return r.Sync() // surfaces asynchronous kernel faults here, not later
	})
	return ms, err
}

// outBuf is the output tensor's buffer, element count and shape.
func (m *Model) outBuf() (gpu.Ptr, int, []int) {
	c, s := m.cfg, m.size
	if c.InnerOnly {
		return m.buf.out, c.Batch * s.Heads * c.SeqLen * s.HeadDim, []int{c.Batch, s.Heads, c.SeqLen, s.HeadDim}
	}
	return m.buf.logits, c.Batch * c.SeqLen * s.Vocab, []int{c.Batch, c.SeqLen, s.Vocab}
}

// Output copies the last call's result to the host as float32: logits
// [B, L, V], or out [B, nh, L, f] for inner-only.
func (m *Model) Output() ([]float32, []int, error) {
	p, n, shape := m.outBuf()
	raw := make([]byte, int64(n)*m.actBytes())
	if err := m.dev.W.Do(func() error { return m.dev.RT.DtoH(raw, p) }); err != nil {
		return nil, nil, err
	}
	out := make([]float32, n)
	for i := range out {
		if m.geo.BF16 {
			out[i] = gpu.FromBF16(binary.LittleEndian.Uint16(raw[2*i:]))
		} else {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return out, shape, nil
}

// Poison fills the output with NaN so a check after Run proves that every
// element was written.
func (m *Model) Poison() error {
	p, n, _ := m.outBuf()
	words := int64(n) * m.actBytes() / 4
	return m.dev.W.Do(func() error { return m.dev.RT.Fill32(p, 0x7fc07fc0, words) })
}
