package gpu

import (
	"fmt"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// cuBLAS constants (cublas_api.h, library_types.h).
const (
	CublasOpN          = 0
	CublasOpT          = 1
	CublasDefaultMath  = 0
	CublasPedanticMath = 2
	// CublasFloat32Sums is CUBLAS_DEFAULT_MATH with
	// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION: with 16-bit C, the
	// default lets cuBLAS reduce split-K partial sums in the 16-bit type,
	// which the specs' "float32 accumulation" rules out (PyTorch's
	// allow_bf16/fp16_reduced_precision_reduction = False, which the
	// pytorch backend sets, is this flag).
	CublasFloat32Sums = CublasDefaultMath | 16
	CudaR32F          = 0
	CudaR16BF         = 14
	CublasCompute32F  = 68
	CublasGemmDefault = -1
	CublasWorkspace   = 32 << 20 // what NVIDIA recommends for Hopper
)

// More cuBLAS constants, for the standalone GEMM (gemm.go).
const (
	CudaR16F = 2 // CUDA_R_16F
	// CublasCompute32FFastTF32 is CUBLAS_COMPUTE_32F_FAST_TF32: float32
	// storage, inputs rounded to TF32 on tensor cores, float32 accumulation.
	CublasCompute32FFastTF32 = 77
)

type cublas struct {
	H            uintptr
	Path         string
	Create       func(h *uintptr) int32
	Destroy      func(h uintptr) int32
	SetMathMode  func(h uintptr, mode int32) int32
	SetWorkspace func(h uintptr, ws uint64, bytes uint64) int32
	SetStream    func(h uintptr, stream uintptr) int32
	Version      func(h uintptr, v *int32) int32
	sgemm        func(h uintptr, ta, tb, m, n, k int32, alpha *float32, A uint64, lda int32,
		B uint64, ldb int32, beta *float32, C uint64, ldc int32) int32
	GemmEx func(h uintptr, ta, tb, m, n, k int32, alpha unsafe.Pointer, A uint64, at, lda int32,
		B uint64, bt, ldb int32, beta unsafe.Pointer, C uint64, ct, ldc int32, compute, algo int32) int32
	WS Ptr
	// gemmSB is cublasGemmStridedBatchedEx; nil where the library lacks it
	// (bound apart from the table: the CPU emulator does not export it).
	GemmSB func(h uintptr, ta, tb, m, n, k int32, alpha unsafe.Pointer, A uint64, at, lda int32, strideA int64,
		B uint64, bt, ldb int32, strideB int64, beta unsafe.Pointer, C uint64, ct, ldc int32, strideC int64,
		batch, compute, algo int32) int32
}

func (b *cublas) funcs() funcs {
	return funcs{{"cublasCreate_v2", &b.Create}, {"cublasDestroy_v2", &b.Destroy}, {"cublasSetMathMode", &b.SetMathMode},
		{"cublasSetWorkspace_v2", &b.SetWorkspace}, {"cublasGetVersion_v2", &b.Version}, {"cublasSgemm_v2", &b.sgemm},
		{"cublasGemmEx", &b.GemmEx}, {"cublasSetStream_v2", &b.SetStream}}
}

// openCUBLAS loads cuBLAS and creates a handle in the current context.
// cublasLt, which cuBLAS links against, is loaded first from the same folder
// so that the system loader need not know that folder.
func openCUBLAS() (*cublas, error) {
	for _, c := range specCUBLAS.candidates() {
		if !strings.Contains(c, "/") {
			continue
		}
		lt := filepath.Join(filepath.Dir(c), strings.Replace(filepath.Base(c), "libcublas", "libcublasLt", 1))
		if h, err := purego.Dlopen(lt, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil && h != 0 {
			break
		}
	}
	lib, path, err := specCUBLAS.open()
	if err != nil {
		return nil, err
	}
	b := &cublas{Path: path}
	if err := bind(lib, path, b.funcs().table()); err != nil {
		return nil, err
	}
	if bind(lib, path, map[string]any{"cublasGemmStridedBatchedEx": &b.GemmSB}) != nil {
		b.GemmSB = nil
	}
	if c := b.Create(&b.H); c != 0 {
		return nil, fmt.Errorf("cublasCreate: status %d", c)
	}
	return b, nil
}

func (b *cublas) Check(op string, c int32) error {
	if c != 0 {
		return fmt.Errorf("cublas %s: status %d", op, c)
	}
	return nil
}

// gemm computes, for row-major Y[M,N] = X[M,K] @ W (W [K,N], or [N,K] when
// transW) plus beta*Y. bf16 operands go through GemmEx with float32
// accumulation on tensor cores; yF32 says Y is float32 (the residual stream)
// rather than the act type. h is the handle to run on: the device's, or a
// chunk lane's (one per stream, each with its own workspace, so concurrent
// GEMMs never share one).
func (b *cublas) Gemm(h uintptr, bf16, transW, yF32 bool, M, N, K int, X Ptr, ldx int, W Ptr, ldw int,
	Y Ptr, ldy int, beta float32) error {
	return b.GemmOp(h, bf16, false, transW, yF32, M, N, K, X, ldx, W, ldw, Y, ldy, beta)
}

// GemmOp is the general row-major product C[M,N] = op(A) @ op(B) + beta*C,
// op(A) being A [M,K] or, when transA, the transpose of a stored [K,M] (the
// backward's weight gradients X^T dY), and op(B) B [K,N] or the transpose of
// a stored [N,K]. cuBLAS is column-major, where a row-major matrix reads as
// its transpose, so it computes C^T = op(B)^T op(A)^T: B goes first and
// each operand keeps its own transpose flag. cF32 says C is float32 (a
// gradient, the residual stream) rather than the act type.
func (b *cublas) GemmOp(h uintptr, bf16, transA, transB, cF32 bool, M, N, K int, A Ptr, lda int, B Ptr, ldb int,
	C Ptr, ldc int, beta float32) error {
	alpha := float32(1)
	ta, tb := int32(CublasOpN), int32(CublasOpN)
	if transA {
		ta = CublasOpT
	}
	if transB {
		tb = CublasOpT
	}
	op := fmt.Sprintf("gemm M=%d N=%d K=%d transA=%v transB=%v bf16=%v", M, N, K, transA, transB, bf16)
	if !bf16 {
		return b.Check(op, b.sgemm(h, tb, ta, int32(N), int32(M), int32(K), &alpha,
			uint64(B), int32(ldb), uint64(A), int32(lda), &beta, uint64(C), int32(ldc)))
	}
	ct := int32(CudaR16BF)
	if cF32 {
		ct = CudaR32F
	}
	return b.Check(op, b.GemmEx(h, tb, ta, int32(N), int32(M), int32(K), unsafe.Pointer(&alpha),
		uint64(B), CudaR16BF, int32(ldb), uint64(A), CudaR16BF, int32(lda), unsafe.Pointer(&beta),
		uint64(C), ct, int32(ldc), CublasCompute32F, CublasGemmDefault))
}
