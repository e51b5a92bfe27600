package gpu

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
		e, err := m.dev.rt.newEvent()
		if err != nil {
			return err
		}
		p.events = append(p.events, e)
		p.names = append(p.names, "")
	}
	p.names[p.used] = part
	p.used++
	return m.dev.rt.record(p.events[p.used-1])
}

// Profile runs one call with an event between launch groups and returns the
// device milliseconds spent per part (gemm_qkvg, inner, norm, ...).
func (m *Model) Profile() (map[string]float64, error) {
	if !m.haveInput {
		return nil, fmt.Errorf("gpu: Profile before inputs were set")
	}
	parts := map[string]float64{}
	err := m.dev.w.do(func() error {
		r := m.dev.rt
		m.prof = &profiler{}
		defer func() {
			for _, e := range m.prof.events {
				r.drv.eventDestroy(e)
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
			r.sync()
			return err
		}
		p := m.prof
		for i := 1; i < p.used; i++ {
			ms, err := r.elapsedMs(p.events[i-1], p.events[i])
			if err != nil {
				return err
			}
			parts[p.names[i]] += ms
		}
		return r.sync()
	})
	return parts, err
}

// BenchGEMM times Y[M,N] = X[M,K] W[K,N] with the device's dense engine on
// random-free but nonzero data (ones scaled), returning TFLOP/s from the
// median of reps calls: the matrix-unit ceiling ../docs/FLOOR.md measures against.
func (d *Device) BenchGEMM(bf16 bool, M, N, K, reps int) (float64, error) {
	if d.rt.blas == nil {
		return 0, fmt.Errorf("gpu: no cuBLAS loaded: %v", d.rt.blasErr)
	}
	var tf float64
	err := d.w.do(func() error {
		r, b := d.rt, d.rt.blas
		el := int64(4)
		if bf16 {
			el = 2
		}
		var ptrs [3]devPtr
		for i, n := range []int64{int64(M) * int64(K), int64(K) * int64(N), int64(M) * int64(N)} {
			p, err := r.alloc(n * el)
			if err != nil {
				return err
			}
			defer r.free(p)
			word := uint32(0x3c003c00) // bf16 pair 2^-7 (x2)
			if !bf16 {
				word = 0x3c000000 // float32 2^-7
			}
			if err := r.fill32(p, word, n*el/4); err != nil {
				return err
			}
			ptrs[i] = p
		}
		mode := int32(cublasPedanticMath)
		if bf16 {
			mode = cublasFloat32Sums // as the models run it
		}
		if err := b.check("set math mode", b.setMathMode(b.h, mode)); err != nil {
			return err
		}
		e0, _ := r.newEvent()
		e1, _ := r.newEvent()
		defer r.drv.eventDestroy(e0)
		defer r.drv.eventDestroy(e1)
		var best []float64
		for i := 0; i < reps+2; i++ {
			r.record(e0)
			if err := b.gemm(b.h, bf16, false, false, M, N, K, ptrs[0], K, ptrs[1], N, ptrs[2], N, 0); err != nil {
				return err
			}
			r.record(e1)
			ms, err := r.elapsedMs(e0, e1)
			if err != nil {
				return err
			}
			if i >= 2 {
				best = append(best, ms)
			}
		}
		tf = 2 * float64(M) * float64(N) * float64(K) / (median(best) * 1e-3) / 1e12
		return nil
	})
	return tf, err
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ { // insertion sort: a handful of samples
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
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
	err := m.dev.w.do(func() error {
		r := m.dev.rt
		p, err := r.alloc(int64(blocks) * 64)
		if err != nil {
			return err
		}
		defer r.free(p)
		if err := r.fill32(p, 0, int64(blocks)*16); err != nil {
			return err
		}
		L, f := int64(cfg.SeqLen), int64(s.HeadDim)
		if err := m.enqueueInner(&m.w.layers[0].inner, m.buf.out, int64(s.Heads)*L*f, L*f, f, p); err != nil {
			return err
		}
		if err := r.sync(); err != nil {
			return err
		}
		raw := make([]byte, blocks*64)
		if err := r.dtoh(raw, p); err != nil {
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
