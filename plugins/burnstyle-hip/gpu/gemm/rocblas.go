package gemm

import (
	"fmt"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// openRocblas is the rocblas variant's path: one
// rocblas_gemm_strided_batched_ex per product, in place (D is C), float32
// compute, rocBLAS's standard algorithm, on the device's rocBLAS handle
// with our workspace.
func openRocblas(d *gpu.Device, g *gemmBufs) (*gemmPath, error) {
	b, err := d.RocBLAS()
	if err != nil {
		return nil, err
	}
	t := rocmTypeOf(g.spec.Dtype)
	if t.rocIn < 0 {
		return nil, fmt.Errorf("%s: not supported through rocBLAS", g.spec)
	}
	r, x := d.RT, g.args
	alpha, beta := float32(1), float32(0)
	stream := ^uintptr(0) // the handle's stream follows r.Stream (a capture's, during --cuda-graph)
	launch := func() error {
		if r.Stream != stream {
			if err := b.Check("set stream", b.SetStream(b.H, r.Stream)); err != nil {
				return err
			}
			stream = r.Stream
		}
		return b.Check(g.spec.String(), b.GemmSB(b.H, amdOp(x.opFirst), amdOp(x.opSecond), x.m, x.n, x.k,
			unsafe.Pointer(&alpha), uint64(g.b), t.rocIn, x.ldFirst, x.strideFirst,
			uint64(g.a), t.rocIn, x.ldSecond, x.strideSecond, unsafe.Pointer(&beta),
			uint64(g.c), t.rocOut, x.ldc, x.strideC, uint64(g.c), t.rocOut, x.ldc, x.strideC,
			x.batch, gpu.RocblasF32, gpu.RocblasAlgoStandard, 0, gpu.RocblasFlagsNone))
	}
	return &gemmPath{launch: launch, library: b.Version(), libPath: b.Path, call: "one rocblas_gemm_strided_batched_ex",
		wsBytes: gpu.RocblasWorkspace, free: func() {}}, nil
}

// rocmType is how one dtype maps onto hipBLASLt and rocBLAS (-1: the
// library is not asked for it).
type rocmType struct {
	hipIn, hipOut, hipCompute int32 // hipDataType of A and B, of C; hipblasComputeType_t
	rocIn, rocOut             int32 // rocblas_datatype; rocBLAS computes in rocblas_datatype_f32_r
}

// rocmTypeOf reads gpu's dtype table; A, B and C share the dtype.
func rocmTypeOf(dtype string) rocmType {
	d, ok := gpu.DtypeOf(dtype)
	if !ok {
		return rocmType{-1, -1, -1, -1, -1}
	}
	return rocmType{d.Hip, d.Hip, d.HipblasCompute, d.Rocblas, d.Rocblas}
}
