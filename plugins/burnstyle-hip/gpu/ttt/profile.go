package ttt

import (
	"encoding/binary"
	"fmt"
)

// profiler puts an event after each launch group of one forward, so device
// time can be split by part. Only Profile enables it; timed runs have none.
type profiler struct {
	events []uintptr
	names  []string
	used   int
}

// mark records an event closing the part named part. No-op when not profiling.
func (m *Model) mark(part string) error {
	p := m.prof
	if p == nil {
		return nil
	}
	if p.used == len(p.events) {
		e, err := m.dev.RT.NewEvent()
		if err != nil {
			return err
		}
		p.events = append(p.events, e)
		p.names = append(p.names, "")
	}
	p.names[p.used] = part
	p.used++
	return m.dev.RT.Record(p.events[p.used-1])
}

// Profile runs one call with an event between launch groups and returns the
// device milliseconds spent per part (gemm_qkvg, inner, norm, ...).
func (m *Model) Profile() (map[string]float64, error) {
	if !m.haveInput {
		return nil, fmt.Errorf("gpu: Profile before inputs were set")
	}
	parts := map[string]float64{}
	err := m.dev.W.Do(func() error {
		r := m.dev.RT
		m.prof = &profiler{}
		defer func() {
			for _, e := range m.prof.events {
				r.Drv.EventDestroy(e)
			}
			m.prof = nil
		}()
		if err := m.mark("start"); err != nil {
			return err
		}
		var err error
		if m.train != nil {
			err = m.enqueueTrain()
		} else if m.cfg.InnerOnly {
			s := m.size
			L, f := int64(m.cfg.SeqLen), int64(s.HeadDim)
			if err = m.enqueueInner(&m.w.layers[0].inner, m.buf.out, int64(s.Heads)*L*f, L*f, f, 0); err == nil {
				err = m.mark("inner")
			}
		} else {
			err = m.enqueueForward()
		}
		if err != nil {
			r.Sync()
			return err
		}
		p := m.prof
		for i := 1; i < p.used; i++ {
			ms, err := r.ElapsedMs(p.events[i-1], p.events[i])
			if err != nil {
				return err
			}
			parts[p.names[i]] += ms
		}
		return r.Sync()
	})
	return parts, err
}

// InnerTicks runs an inner-only model's kernel once with its phase counters
// on and returns, per phase slot, the clock cycles of one mini-batch step
// averaged over blocks (thread 0 reads clock64 after each barrier). Slots
// follow the kernel's barriers: variant 2 has S1, S2; variant 1 has P4+P1,
// P2, P3; mlp has P8+P1, P2 ... P7.
func (m *Model) InnerTicks() ([8]float64, error) {
	var out [8]float64
	if !m.cfg.InnerOnly || !m.haveInput {
		return out, fmt.Errorf("gpu: InnerTicks needs an inner-only model with inputs")
	}
	s, cfg := m.size, m.cfg
	blocks := cfg.Batch * s.Heads
	err := m.dev.W.Do(func() error {
		r := m.dev.RT
		p, err := r.Alloc(int64(blocks) * 64)
		if err != nil {
			return err
		}
		defer r.Free(p)
		if err := r.Fill32(p, 0, int64(blocks)*16); err != nil {
			return err
		}
		L, f := int64(cfg.SeqLen), int64(s.HeadDim)
		if err := m.enqueueInner(&m.w.layers[0].inner, m.buf.out, int64(s.Heads)*L*f, L*f, f, p); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		raw := make([]byte, blocks*64)
		if err := r.DtoH(raw, p); err != nil {
			return err
		}
		steps := float64(blocks * cfg.SeqLen / cfg.MiniBatch)
		for b := 0; b < blocks; b++ {
			for k := 0; k < 8; k++ {
				out[k] += float64(binary.LittleEndian.Uint64(raw[(b*8+k)*8:])) / steps
			}
		}
		return nil
	})
	return out, err
}
