package gpu

// hipBLASLt, the gemm workload's library on rocm: the same product as the
// cuBLASLt variant on cuda (cublaslt.go), through hipblasLtMatmul with the
// fastest of its heuristic's top algorithms, timed on the device and
// recorded. Bound at run time through purego like every vendor library
// here. Written from hipblaslt.h (Debian's libhipblaslt-dev 7.1); the
// names and the constants below are checked against that header
// (TestROCmBLASHeaders) and, where XBENCH_LIBHIPBLASLT names the real
// library, the names against its exported symbols (TestROCmBLASLibraries).

import (
	"encoding/hex"
	"fmt"
	"unsafe"
)

// hipBLASLt and hipBLAS-common constants (hipblaslt.h, hipblas-common.h,
// hip/library_types.h). hipblasOperation_t takes rocBLAS's values, not
// cuBLAS's 0 and 1.
const (
	HipblasOpN                   = 111 // HIPBLAS_OP_N
	HipblasOpT                   = 112 // HIPBLAS_OP_T
	HipR32F                      = 0   // HIP_R_32F
	HipR16F                      = 2   // HIP_R_16F
	HipR16BF                     = 14  // HIP_R_16BF
	HipblasCompute32F            = 2   // HIPBLAS_COMPUTE_32F
	HipblasCompute32FFastTF32    = 6   // HIPBLAS_COMPUTE_32F_FAST_TF32 (xf32 on CDNA3)
	HipblasLtDescTransA          = 0   // HIPBLASLT_MATMUL_DESC_TRANSA, int32
	HipblasLtDescTransB          = 1   // HIPBLASLT_MATMUL_DESC_TRANSB, int32
	HipblasLtLayoutBatch         = 0   // HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32
	HipblasLtLayoutStride        = 1   // HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64
	HipblasLtPrefMaxWorkspace    = 1   // HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64
	HipblasLtWorkspace           = 32 << 20
	hipblasLtHeuristicResultSize = 56
)

// HipLtAlgo is hipblasLtMatmulAlgo_t: 16 opaque bytes and the workspace the
// algorithm may use.
type HipLtAlgo struct {
	Data         [16]byte
	MaxWorkspace uint64
}

// HipLtHeuristic is hipblasLtMatmulHeuristicResult_t.
type HipLtHeuristic struct {
	Algo      HipLtAlgo
	Workspace uint64
	State     int32
	Waves     float32
	_         [4]int32
}

// The header's layout, 56 bytes: either order of the subtraction is
// negative, a compile error, unless the sizes are equal.
var (
	_ [hipblasLtHeuristicResultSize - unsafe.Sizeof(HipLtHeuristic{})]byte
	_ [unsafe.Sizeof(HipLtHeuristic{}) - hipblasLtHeuristicResultSize]byte
)

// String is the algorithm's opaque bytes in hex, what a run records to say
// which one it used (the header gives them no meaning; the same library
// version reads them back as the same algorithm).
func (a HipLtAlgo) String() string { return hex.EncodeToString(a.Data[:]) }

type HipblasLt struct {
	H       uintptr
	Path    string
	create  func(h *uintptr) int32
	destroy func(h uintptr) int32
	version func(h uintptr, v *int32) int32
	LtDescriptors
	Heuristic func(h, desc, a, b, c, d, pref uintptr, want int32, out *HipLtHeuristic, got *int32) int32
	Matmul    func(h, desc uintptr, alpha unsafe.Pointer, A uint64, la uintptr, B uint64, lb uintptr,
		beta unsafe.Pointer, C uint64, lc uintptr, D uint64, ld uintptr, algo *HipLtAlgo, ws, wsBytes uint64, stream uintptr) int32
}

func (b *HipblasLt) funcs() funcs {
	return funcs{{"hipblasLtCreate", &b.create}, {"hipblasLtDestroy", &b.destroy}, {"hipblasLtGetVersion", &b.version},
		{"hipblasLtMatmulDescCreate", &b.DescCreate}, {"hipblasLtMatmulDescDestroy", &b.DescDestroy},
		{"hipblasLtMatmulDescSetAttribute", &b.DescSet}, {"hipblasLtMatrixLayoutCreate", &b.LayoutCreate},
		{"hipblasLtMatrixLayoutDestroy", &b.LayoutDestroy}, {"hipblasLtMatrixLayoutSetAttribute", &b.LayoutSet},
		{"hipblasLtMatmulPreferenceCreate", &b.PrefCreate}, {"hipblasLtMatmulPreferenceDestroy", &b.PrefDestroy},
		{"hipblasLtMatmulPreferenceSetAttribute", &b.PrefSet}, {"hipblasLtMatmulAlgoGetHeuristic", &b.Heuristic},
		{"hipblasLtMatmul", &b.Matmul}}
}

// specHIPBLASLT: ROCm 6 and 7 ship libhipblaslt.so.0 and .so.1.
var specHIPBLASLT = libSpec{"hipBLASLt", "XBENCH_LIBHIPBLASLT",
	[]string{"libhipblaslt.so", "libhipblaslt.so.1", "libhipblaslt.so.0"}, rocmDirs()}

// bindHIPBLASLt resolves every symbol of the binding (no handle).
func bindHIPBLASLt() (*HipblasLt, error) {
	b := &HipblasLt{}
	var err error
	if b.Path, err = specHIPBLASLT.bindFuncs(b.funcs()); err != nil {
		return nil, err
	}
	return b, nil
}

// HipBLASLt is the device's hipBLASLt handle, opened on first use. On the
// worker.
func (d *Device) HipBLASLt() (*HipblasLt, error) {
	if d.hipLt != nil || d.hipLtErr != nil {
		return d.hipLt, d.hipLtErr
	}
	if d.RT.Kind != "rocm" {
		d.hipLtErr = fmt.Errorf("hipBLASLt needs a rocm device (this one is %s)", d.RT.Kind)
		return nil, d.hipLtErr
	}
	b, err := bindHIPBLASLt()
	if err == nil {
		if c := b.create(&b.H); c != 0 {
			err = fmt.Errorf("hipblasLtCreate: status %d", c)
		}
	}
	if err != nil {
		d.hipLtErr = fmt.Errorf("rocm gemm needs hipBLASLt: %w", err)
		return nil, d.hipLtErr
	}
	d.hipLt = b
	return b, nil
}

// LtVersion is "hipblaslt MAJOR.MINOR.PATCH" from hipblasLtGetVersion
// (major*100000 + minor*100 + patch).
func (b *HipblasLt) LtVersion() string {
	var v int32
	if b.version(b.H, &v) != 0 {
		return "hipblaslt (version unknown)"
	}
	return fmt.Sprintf("hipblaslt %d.%d.%d", v/100000, v/100%1000, v%100)
}
