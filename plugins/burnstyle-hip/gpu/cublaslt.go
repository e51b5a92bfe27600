package gpu

// cuBLASLt for the GEMM workload's "cublaslt" variant: the same product as
// the cuBLAS path (gemm.go), through cublasLtMatmul with an algorithm this
// code picks, by timing the top results of cuBLASLt's heuristic on the
// device, and records. Bound at run time like cuBLAS; the ROCm analogue
// is hipblaslt.go.

import (
	"fmt"
	"unsafe"
)

// LtAlgo is cublasLtMatmulAlgo_t; ltHeuristic cublasLtMatmulHeuristicResult_t.
type LtAlgo [8]uint64

type LtHeuristic struct {
	Algo      LtAlgo
	Workspace uint64
	State     int32
	Waves     float32
	_         [4]int32
}

// LtDescriptors are the descriptor calls cuBLASLt and hipBLASLt share,
// with the same signatures: the matmul description, the matrix layouts and
// the heuristic's preference.
type LtDescriptors struct {
	DescCreate    func(d *uintptr, compute, scale int32) int32
	DescDestroy   func(d uintptr) int32
	DescSet       func(d uintptr, attr int32, buf unsafe.Pointer, n uint64) int32
	LayoutCreate  func(l *uintptr, dtype int32, rows, cols uint64, ld int64) int32
	LayoutDestroy func(l uintptr) int32
	LayoutSet     func(l uintptr, attr int32, buf unsafe.Pointer, n uint64) int32
	PrefCreate    func(p *uintptr) int32
	PrefDestroy   func(p uintptr) int32
	PrefSet       func(p uintptr, attr int32, buf unsafe.Pointer, n uint64) int32
}

type CublasLt struct {
	H       uintptr
	Path    string
	create  func(h *uintptr) int32
	destroy func(h uintptr) int32
	Version func() uint64
	LtDescriptors
	Heuristic func(h, desc, a, b, c, d, pref uintptr, want int32, out *LtHeuristic, got *int32) int32
	Matmul    func(h, desc uintptr, alpha unsafe.Pointer, A uint64, la uintptr, B uint64, lb uintptr,
		beta unsafe.Pointer, C uint64, lc uintptr, D uint64, ld uintptr, algo *LtAlgo, ws, wsBytes uint64, stream uintptr) int32
	AlgoGet func(algo *LtAlgo, attr int32, buf unsafe.Pointer, n uint64, written *uint64) int32
}

func (b *CublasLt) funcs() funcs {
	return funcs{{"cublasLtCreate", &b.create}, {"cublasLtDestroy", &b.destroy}, {"cublasLtGetVersion", &b.Version},
		{"cublasLtMatmulDescCreate", &b.DescCreate}, {"cublasLtMatmulDescDestroy", &b.DescDestroy},
		{"cublasLtMatmulDescSetAttribute", &b.DescSet}, {"cublasLtMatrixLayoutCreate", &b.LayoutCreate},
		{"cublasLtMatrixLayoutDestroy", &b.LayoutDestroy}, {"cublasLtMatrixLayoutSetAttribute", &b.LayoutSet},
		{"cublasLtMatmulPreferenceCreate", &b.PrefCreate}, {"cublasLtMatmulPreferenceDestroy", &b.PrefDestroy},
		{"cublasLtMatmulPreferenceSetAttribute", &b.PrefSet}, {"cublasLtMatmulAlgoGetHeuristic", &b.Heuristic},
		{"cublasLtMatmul", &b.Matmul}, {"cublasLtMatmulAlgoConfigGetAttribute", &b.AlgoGet}}
}

// specCUBLASLt: cuBLAS's own sibling, where openCUBLAS already loaded it.
var specCUBLASLt = libSpec{"cuBLASLt", "XBENCH_LIBCUBLASLT",
	[]string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, cudaToolkitDirs()}

// bindCUBLASLt resolves every symbol of the binding (no handle: no GPU
// needed), for the symbol test and for openCUBLASLt.
func bindCUBLASLt() (*CublasLt, error) {
	b := &CublasLt{}
	var err error
	if b.Path, err = specCUBLASLt.bindFuncs(b.funcs()); err != nil {
		return nil, err
	}
	return b, nil
}

// lt is the device's cuBLASLt handle, opened on first use. On the worker.
func (d *Device) BLASLt() (*CublasLt, error) {
	if d.ltLib != nil || d.ltErr != nil {
		return d.ltLib, d.ltErr
	}
	if d.RT.Kind != "cuda" {
		d.ltErr = fmt.Errorf("the cublaslt variant needs cuda (on %s gemm's default path is hipBLASLt)", d.RT.Kind)
		return nil, d.ltErr
	}
	b, err := bindCUBLASLt()
	if err == nil {
		if c := b.create(&b.H); c != 0 {
			err = fmt.Errorf("cublasLtCreate: status %d", c)
		}
	}
	d.ltLib, d.ltErr = b, err
	if err != nil {
		d.ltLib = nil
	}
	return d.ltLib, d.ltErr
}

// LtVersion is "cublasLt MAJOR.MINOR.PATCH".
func (b *CublasLt) LtVersion() string {
	v := b.Version()
	return fmt.Sprintf("cublasLt %d.%d.%d", v/10000, v%10000/100, v%100)
}
