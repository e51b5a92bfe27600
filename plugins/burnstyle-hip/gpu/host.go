package gpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
)

// NaNWord is a 32-bit word of quiet NaNs of type dt.
func NaNWord(dt int32) uint32 {
	switch dt {
	case CudaR16BF:
		return 0x7fc07fc0
	case CudaR16F:
		return 0x7e007e00
	}
	return 0x7fc00000
}

// Encode is v in the device type dt, little-endian.
func Encode(v []float32, dt int32) []byte {
	var b []byte
	switch dt {
	case CudaR16BF, CudaR16F:
		conv := cpu.BF16Bits
		if dt == CudaR16F {
			conv = cpu.F16Bits
		}
		b = make([]byte, 2*len(v))
		parallelChunks(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				binary.LittleEndian.PutUint16(b[2*i:], conv(v[i]))
			}
		})
	default:
		b = make([]byte, 4*len(v))
		parallelChunks(len(v), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v[i]))
			}
		})
	}
	return b
}

// Decode widens device data of type dt to float32.
func Decode(b []byte, dt int32) []float32 {
	switch dt {
	case CudaR16BF, CudaR16F:
		conv := cpu.FromBF16Bits
		if dt == CudaR16F {
			conv = cpu.FromF16Bits
		}
		v := make([]float32, len(b)/2)
		for i := range v {
			v[i] = conv(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return v
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// gemmChunk is the elements one generator stream fills: the inputs depend
// only on (seed, which, n), never on GOMAXPROCS.
const gemmChunk = 1 << 20

// RandomInputs is n values uniform in [-1, 1), chunk c drawn from a PCG
// seeded (seed, which<<40 | c), filled in parallel.
func RandomInputs(n int, seed, which uint64) []float32 {
	v := make([]float32, n)
	chunks := (n + gemmChunk - 1) / gemmChunk
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for c := 0; c < chunks; c++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := rand.New(rand.NewPCG(seed, which<<40|uint64(c)))
			for i := c * gemmChunk; i < min((c+1)*gemmChunk, n); i++ {
				v[i] = 2*r.Float32() - 1 // exact: Float32 is a multiple of 2^-24
			}
		}()
	}
	wg.Wait()
	return v
}

// parallelChunks calls fn over [0, n) in gemmChunk pieces on every core.
func parallelChunks(n int, fn func(lo, hi int)) {
	chunks := (n + gemmChunk - 1) / gemmChunk
	if chunks <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for c := 0; c < chunks; c++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(c*gemmChunk, min((c+1)*gemmChunk, n))
		}()
	}
	wg.Wait()
}

// ToBF16 rounds to nearest even, as the kernels' stf does.
func ToBF16(x float32) uint16 {
	u := math.Float32bits(x)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
