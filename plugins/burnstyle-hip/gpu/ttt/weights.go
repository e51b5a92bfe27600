package ttt

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// layerW is one layer's device tensors. Matrices are in the act type
// (float32 or bfloat16); vectors and the inner model's parameters are
// float32 (in a bfloat16 run they hold bfloat16-rounded values: the spec
// keeps norm statistics and the inner state in float32).
type layerW struct {
	tttNorm, mlpNorm, postW, postB gpu.Ptr
	wqkvg                          gpu.Ptr // [C, ldp] = wq | wk (mamba: wg) | wv | lr_w^T | zero pad
	lrB                            gpu.Ptr
	wo, wgu, wdown                 gpu.Ptr // [C,C], [C,2I] = w_gate | w_up, [I,C]
	inner                          innerW
	mamba                          mambaW // backbone mamba only (mamba.go)
}

type innerW struct{ W1, b1, W2, b2, lnw, lnb, tokd gpu.Ptr }

type weights struct {
	embed, finalNorm, rope gpu.Ptr
	layers                 []layerW
	ldp                    int
}

// host reads one named tensor as float32 and checks its shape.
func host(w map[string]tensorfile.Tensor, name string, shape ...int) ([]float32, error) {
	t, ok := w[name]
	if !ok {
		return nil, fmt.Errorf("weights: %s missing", name)
	}
	if len(t.Shape) != len(shape) {
		return nil, fmt.Errorf("weights: %s has shape %v, want %v", name, t.Shape, shape)
	}
	for i := range shape {
		if t.Shape[i] != shape[i] {
			return nil, fmt.Errorf("weights: %s has shape %v, want %v", name, t.Shape, shape)
		}
	}
	v, err := t.Float32s()
	if err != nil {
		return nil, fmt.Errorf("weights: %s: %w", name, err)
	}
	return v, nil
}

// upload copies v to a new device buffer: as the act type when act, else as
// float32 (rounded through bfloat16 in a bfloat16 run when param).
func (m *Model) upload(v []float32, act, param bool) (gpu.Ptr, error) {
	var b []byte
	switch {
	case act && m.geo.BF16:
		b = make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], gpu.ToBF16(x))
		}
	default:
		b = make([]byte, 4*len(v))
		for i, x := range v {
			if param && m.geo.BF16 {
				x = gpu.FromBF16(gpu.ToBF16(x))
			}
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
	}
	p, err := m.alloc(int64(len(b)))
	if err != nil {
		return 0, err
	}
	return p, m.dev.RT.HtoD(p, b)
}

// param uploads a named float32 parameter (vector or inner state).
func (m *Model) param(w map[string]tensorfile.Tensor, name string, shape ...int) (gpu.Ptr, error) {
	v, err := host(w, name, shape...)
	if err != nil {
		return 0, err
	}
	return m.upload(v, false, true)
}

// loadInnerW uploads one layer's inner-model parameters.
func (m *Model) loadInnerW(w map[string]tensorfile.Tensor, prefix string) (innerW, error) {
	nh, f, h, kb := m.size.Heads, m.geo.F, m.geo.hidden(), m.geo.KB
	var iw innerW
	var err error
	get := func(dst *gpu.Ptr, name string, shape ...int) {
		if err == nil {
			*dst, err = m.param(w, prefix+name, shape...)
		}
	}
	get(&iw.W1, "W1", nh, f, h)
	get(&iw.b1, "b1", nh, h)
	if m.geo.MLP {
		get(&iw.W2, "W2", nh, h, f)
		get(&iw.b2, "b2", nh, f)
	}
	get(&iw.lnw, "ln_w", nh, f)
	get(&iw.lnb, "ln_b", nh, f)
	get(&iw.tokd, "tok_delta", kb)
	return iw, err
}

// ropeTable is cos and sin of p * theta^(-2i/f) for p < KB, i < f/2, computed
// in float64 so the device needs no transcendental for it.
func (m *Model) ropeTable() []float32 {
	f, kb := m.geo.F, m.geo.KB
	t := make([]float32, 0, kb*f)
	for p := 0; p < kb; p++ {
		for i := 0; i < f/2; i++ {
			a := float64(p) * math.Pow(10000, -2*float64(i)/float64(f))
			t = append(t, float32(math.Cos(a)), float32(math.Sin(a)))
		}
	}
	return t
}
