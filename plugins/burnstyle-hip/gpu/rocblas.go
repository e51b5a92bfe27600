package gpu

// rocBLAS, the gemm workload's "rocblas" variant on rocm: the product
// through rocblas_gemm_strided_batched_ex, the call the seed's rocBLAS
// suites time beside hipBLASLt. Bound at run time through purego. Written
// from rocblas.h (Debian's librocblas-dev 6.4); the names and constants are
// checked against that header (TestROCmBLASHeaders) and, where
// XBENCH_LIBROCBLAS names the real library, the names against its exported
// symbols (TestROCmBLASLibraries).

import (
	"fmt"
	"unsafe"
)

// rocBLAS constants (rocblas-types.h). rocblas_datatype has values of its
// own (150...), unlike hipDataType's, which follow CUDA's.
const (
	RocblasOpN          = 111 // rocblas_operation_none
	RocblasOpT          = 112 // rocblas_operation_transpose
	RocblasF16          = 150 // rocblas_datatype_f16_r
	RocblasF32          = 151 // rocblas_datatype_f32_r
	RocblasBF16         = 168 // rocblas_datatype_bf16_r
	RocblasAlgoStandard = 0   // rocblas_gemm_algo_standard
	RocblasFlagsNone    = 0   // rocblas_gemm_flags_none
	RocblasWorkspace    = 32 << 20
)

type Rocblas struct {
	H             uintptr
	Path          string
	create        func(h *uintptr) int32
	destroy       func(h uintptr) int32
	SetStream     func(h uintptr, stream uintptr) int32
	SetWorkspace  func(h uintptr, ws uint64, bytes uint64) int32
	versionSize   func(n *uint64) int32
	versionString func(buf *byte, n uint64) int32
	// GemmSB is rocblas_gemm_strided_batched_ex: D = alpha op(A) op(B) +
	// beta C for each batch entry, column-major (C and D may alias).
	GemmSB func(h uintptr, ta, tb, m, n, k int32, alpha unsafe.Pointer,
		A uint64, at, lda int32, strideA int64, B uint64, bt, ldb int32, strideB int64, beta unsafe.Pointer,
		C uint64, ct, ldc int32, strideC int64, D uint64, dt, ldd int32, strideD int64,
		batch, compute, algo, solution int32, flags uint32) int32
	// WS is the workspace handed to rocBLAS (rocblas_set_workspace), so it
	// is counted and nothing is allocated behind the count while timing.
	WS Ptr
}

func (b *Rocblas) funcs() funcs {
	return funcs{{"rocblas_create_handle", &b.create}, {"rocblas_destroy_handle", &b.destroy}, {"rocblas_set_stream", &b.SetStream},
		{"rocblas_set_workspace", &b.SetWorkspace}, {"rocblas_get_version_string_size", &b.versionSize},
		{"rocblas_get_version_string", &b.versionString}, {"rocblas_gemm_strided_batched_ex", &b.GemmSB}}
}

// specROCBLAS: ROCm 5 (.so.0), 6 (.so.4) and 7 (.so.5).
var specROCBLAS = libSpec{"rocBLAS", "XBENCH_LIBROCBLAS",
	[]string{"librocblas.so", "librocblas.so.5", "librocblas.so.4", "librocblas.so.0"}, rocmDirs()}

func bindROCBLAS() (*Rocblas, error) {
	b := &Rocblas{}
	var err error
	if b.Path, err = specROCBLAS.bindFuncs(b.funcs()); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Rocblas) Check(op string, c int32) error {
	if c != 0 {
		return fmt.Errorf("rocblas %s: status %d", op, c)
	}
	return nil
}

// RocBLAS is the device's rocBLAS handle with its workspace, opened on
// first use. On the worker.
func (d *Device) RocBLAS() (*Rocblas, error) {
	if d.roc != nil || d.rocErr != nil {
		return d.roc, d.rocErr
	}
	if d.RT.Kind != "rocm" {
		d.rocErr = fmt.Errorf("rocBLAS needs a rocm device (this one is %s)", d.RT.Kind)
		return nil, d.rocErr
	}
	b, err := bindROCBLAS()
	if err == nil {
		err = b.Check("create handle", b.create(&b.H))
	}
	if err == nil {
		if b.WS, err = d.RT.Alloc(RocblasWorkspace); err == nil {
			err = b.Check("set workspace", b.SetWorkspace(b.H, uint64(b.WS), RocblasWorkspace))
		}
	}
	if err != nil {
		d.rocErr = fmt.Errorf("the rocblas variant needs rocBLAS: %w", err)
		return nil, d.rocErr
	}
	d.roc = b
	return b, nil
}

// Version is "rocblas " and rocBLAS's own version string.
func (b *Rocblas) Version() string {
	var n uint64
	if b.versionSize(&n) != 0 || n == 0 || n > 1024 {
		return "rocblas (version unknown)"
	}
	buf := make([]byte, n)
	if b.versionString(&buf[0], n) != 0 {
		return "rocblas (version unknown)"
	}
	return "rocblas " + goString(&buf[0])
}

// close releases the handle and its workspace. On the worker.
func (b *Rocblas) close(r *Runtime) {
	b.destroy(b.H)
	if b.WS != 0 {
		r.Free(b.WS)
	}
}
