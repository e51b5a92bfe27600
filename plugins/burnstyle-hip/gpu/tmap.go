package gpu

// Tensor maps (CUtensorMap) for Hopper's bulk tensor copies
// (cp.async.bulk.tensor): the driver encodes one from a tensor's shape and
// a box, and a kernel takes it by value as a __grid_constant__ parameter.

import (
	"fmt"
	"unsafe"
)

// TensorMap is cuda.h's CUtensorMap: 128 opaque bytes, 64-byte aligned
// (cuda.h asks 128 in C++; the driver checks 64). It is passed to
// LaunchCluster as *TensorMap: the kernel parameter is the struct itself.
type TensorMap struct {
	_      [0]func() // not comparable: compare encodings with Bytes
	opaque [16]uint64
}

// cuda.h's enums, the values this file passes.
const (
	tmapUint16       = 1 // CU_TENSOR_MAP_DATA_TYPE_UINT16: bits copied as is (bfloat16, float16)
	tmapInterleave0  = 0 // CU_TENSOR_MAP_INTERLEAVE_NONE
	TmapSwizzle128B  = 3 // CU_TENSOR_MAP_SWIZZLE_128B
	tmapL2Promote128 = 2 // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
	tmapOOBZero      = 0 // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read as zero
)

// TiledMap describes a 16-bit tensor of up to 5 dimensions, innermost
// first, and the box one copy moves.
type TiledMap struct {
	Dims    []uint64 // elements per dimension, innermost first
	Box     []uint32 // box elements per dimension
	Swizzle int      // TmapSwizzle128B or 0
}

// tiledArgs checks m against cuTensorMapEncodeTiled's documented limits and
// returns the strides (bytes, dimensions 1..rank-1 of a dense tensor) and
// element strides (all 1) it takes. Apart so a test can state the limits.
func (m TiledMap) tiledArgs() (strides []uint64, elem []uint32, err error) {
	const eb = 2 // bytes per element
	rank := len(m.Dims)
	switch {
	case rank < 1 || rank > 5:
		return nil, nil, fmt.Errorf("tensor map: rank %d (want 1 to 5)", rank)
	case len(m.Box) != rank:
		return nil, nil, fmt.Errorf("tensor map: %d box sizes for rank %d", len(m.Box), rank)
	case m.Dims[0]*eb%16 != 0:
		return nil, nil, fmt.Errorf("tensor map: inner dimension of %d elements is not a multiple of 16 bytes", m.Dims[0])
	case m.Box[0]*eb%16 != 0:
		return nil, nil, fmt.Errorf("tensor map: inner box of %d elements is not a multiple of 16 bytes", m.Box[0])
	case m.Swizzle == TmapSwizzle128B && m.Box[0]*eb > 128:
		return nil, nil, fmt.Errorf("tensor map: inner box of %d bytes exceeds the 128-byte swizzle span", m.Box[0]*eb)
	}
	elem = make([]uint32, rank)
	stride := uint64(eb)
	for i := 0; i < rank; i++ {
		elem[i] = 1
		if m.Box[i] < 1 || m.Box[i] > 256 {
			return nil, nil, fmt.Errorf("tensor map: box %d of dimension %d (want 1 to 256)", m.Box[i], i)
		}
		if m.Dims[i] < 1 || m.Dims[i] > 1<<32 {
			return nil, nil, fmt.Errorf("tensor map: dimension %d has %d elements (want 1 to 2^32)", i, m.Dims[i])
		}
		stride *= m.Dims[i]
		if i+1 < rank {
			if stride >= 1<<40 {
				return nil, nil, fmt.Errorf("tensor map: stride of dimension %d is %d bytes (limit 2^40)", i+1, stride)
			}
			strides = append(strides, stride)
		}
	}
	return strides, elem, nil
}

// cuTensorMapEncodeTiled's signature (cuda.h, CUDA 12.0 and newer).
type tmapEncodeFn func(tm *TensorMap, dtype uint32, rank uint32, addr uint64, dims *uint64, strides *uint64,
	box *uint32, elem *uint32, interleave, swizzle, l2, oob uint32) int32

// EncodeTiled makes the tensor map of m over the 16-bit tensor at p. CUDA
// only, from a driver that has cuTensorMapEncodeTiled (sm_90 and newer).
func (r *Runtime) EncodeTiled(p Ptr, m TiledMap) (*TensorMap, error) {
	if r.tmapEncode == nil {
		return nil, fmt.Errorf("tensor map %v: the driver has no cuTensorMapEncodeTiled (CUDA 12 or newer on sm_90 is needed)", m.Dims)
	}
	strides, elem, err := m.tiledArgs()
	if err != nil {
		return nil, err
	}
	if uint64(p)%16 != 0 {
		return nil, fmt.Errorf("tensor map %v: address %#x is not 16-byte aligned", m.Dims, uint64(p))
	}
	tm := new(TensorMap)
	if uintptr(unsafe.Pointer(tm))%64 != 0 { // Go's allocator aligns 128-byte objects to 128
		return nil, fmt.Errorf("tensor map: Go allocated it at %p, not 64-byte aligned", tm)
	}
	var sp *uint64
	if len(strides) > 0 {
		sp = &strides[0]
	}
	code := r.tmapEncode(tm, tmapUint16, uint32(len(m.Dims)), uint64(p), &m.Dims[0], sp, &m.Box[0], &elem[0],
		tmapInterleave0, uint32(m.Swizzle), tmapL2Promote128, tmapOOBZero)
	if err := r.Check(fmt.Sprintf("cuTensorMapEncodeTiled dims %v box %v swizzle %d", m.Dims, m.Box, m.Swizzle), code); err != nil {
		return nil, err
	}
	return tm, nil
}

// TensorMaps says whether EncodeTiled can work here: a CUDA driver with
// cuTensorMapEncodeTiled on sm_90 or newer (never the emulator or HIP).
func (r *Runtime) TensorMaps() bool { return r.tmapEncode != nil }

// Bytes is the encoding, for tests and logs.
func (t *TensorMap) Bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&t.opaque[0])), len(t.opaque)*8)
}

// Check is nil when the driver's documented limits accept m.
func (m TiledMap) Check() error {
	_, _, err := m.tiledArgs()
	return err
}
