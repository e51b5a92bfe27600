// Package tensorfile reads and writes safetensors files: an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the raw little-endian tensor bytes. Backends in
// every language exchange weights, inputs and outputs through this format.
package tensorfile

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is a safetensors element type name.
type DType string

// The element types xbench exchanges.
const (
	DTypeF32  DType = "F32"
	DTypeF64  DType = "F64"
	DTypeI32  DType = "I32"
	DTypeI64  DType = "I64"
	DTypeBF16 DType = "BF16"
	DTypeF16  DType = "F16"
)

// Size is the number of bytes one element takes, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case DTypeF32, DTypeI32:
		return 4
	case DTypeF64, DTypeI64:
		return 8
	case DTypeBF16, DTypeF16:
		return 2
	}
	return 0
}

// Tensor is one named array: its element type, its shape (row-major) and its
// raw little-endian bytes.
type Tensor struct {
	DType DType
	Shape []int
	Data  []byte
}

// NumElements is the product of the shape (1 for a scalar).
func (t Tensor) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// F32 packs v as an F32 tensor of the given shape.
func F32(shape []int, v []float32) Tensor { return pack(DTypeF32, shape, v) }

// F64 packs v as an F64 tensor of the given shape.
func F64(shape []int, v []float64) Tensor { return pack(DTypeF64, shape, v) }

// I32 packs v as an I32 tensor of the given shape.
func I32(shape []int, v []int32) Tensor { return pack(DTypeI32, shape, v) }

// I64 packs v as an I64 tensor of the given shape.
func I64(shape []int, v []int64) Tensor { return pack(DTypeI64, shape, v) }

// pack is v's little-endian bytes (floats as their IEEE bits) as a tensor.
func pack[T float32 | float64 | int32 | int64](dt DType, shape []int, v []T) Tensor {
	b, err := binary.Append(make([]byte, 0, dt.Size()*len(v)), binary.LittleEndian, v)
	if err != nil {
		panic(err) // fixed-size element types never fail to encode
	}
	return Tensor{DType: dt, Shape: cloneShape(shape), Data: b}
}

// BF16 packs v as a BF16 tensor, rounding each value to nearest even.
func BF16(shape []int, v []float32) Tensor {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], float32ToBF16(x))
	}
	return Tensor{DType: DTypeBF16, Shape: cloneShape(shape), Data: b}
}

// F16 packs v as an IEEE half-precision tensor, rounding to nearest even.
func F16(shape []int, v []float32) Tensor {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], float32ToF16(x))
	}
	return Tensor{DType: DTypeF16, Shape: cloneShape(shape), Data: b}
}

// Float64s decodes a floating-point tensor (F32, F64, BF16, F16) to float64.
func (t Tensor) Float64s() ([]float64, error) {
	if err := t.checkLen(); err != nil {
		return nil, err
	}
	n := t.NumElements()
	out := make([]float64, n)
	switch t.DType {
	case DTypeF64:
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:]))
		}
	case DTypeF32, DTypeBF16, DTypeF16:
		f, err := t.Float32s()
		if err != nil {
			return nil, err
		}
		for i, x := range f {
			out[i] = float64(x)
		}
	default:
		return nil, fmt.Errorf("decode %s tensor as float64: not a floating-point dtype", t.DType)
	}
	return out, nil
}

// Float32s decodes a floating-point tensor to float32 (F64 is rounded).
func (t Tensor) Float32s() ([]float32, error) {
	if err := t.checkLen(); err != nil {
		return nil, err
	}
	n := t.NumElements()
	out := make([]float32, n)
	switch t.DType {
	case DTypeF32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
	case DTypeF64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:])))
		}
	case DTypeBF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.Data[2*i:])) << 16)
		}
	case DTypeF16:
		for i := range out {
			out[i] = f16ToFloat32(binary.LittleEndian.Uint16(t.Data[2*i:]))
		}
	default:
		return nil, fmt.Errorf("decode %s tensor as float32: not a floating-point dtype", t.DType)
	}
	return out, nil
}

// Int32s decodes an integer tensor (I32, or I64 when every value fits).
func (t Tensor) Int32s() ([]int32, error) {
	if err := t.checkLen(); err != nil {
		return nil, err
	}
	out := make([]int32, t.NumElements())
	switch t.DType {
	case DTypeI32:
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
	case DTypeI64:
		for i := range out {
			v := int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("decode I64 tensor as int32: element %d = %d overflows int32", i, v)
			}
			out[i] = int32(v)
		}
	default:
		return nil, fmt.Errorf("decode %s tensor as int32: not an integer dtype", t.DType)
	}
	return out, nil
}

// checkLen guards the decoders against a tensor built by hand with a byte
// slice that does not match its shape.
func (t Tensor) checkLen() error {
	size := t.DType.Size()
	if size == 0 {
		return fmt.Errorf("decode tensor: unknown dtype %q", t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("decode tensor: negative dimension in shape %v", t.Shape)
		}
	}
	if want := t.NumElements() * size; len(t.Data) != want {
		return fmt.Errorf("decode %s tensor of shape %v: have %d bytes, want %d", t.DType, t.Shape, len(t.Data), want)
	}
	return nil
}

func cloneShape(s []int) []int {
	out := make([]int, len(s))
	copy(out, s)
	return out
}
