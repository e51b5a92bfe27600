package gemm

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// cuBLASLt constants (cublasLt.h).
const (
	ltDescTransA      = 3 // CUBLASLT_MATMUL_DESC_TRANSA, int32 cublasOperation_t
	ltDescTransB      = 4 // CUBLASLT_MATMUL_DESC_TRANSB
	ltLayoutBatch     = 5 // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32
	ltLayoutStride    = 6 // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64
	ltPrefMaxWS       = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64
	ltPrefReduceMask  = 3 // CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, uint32
	ltReduceNoOutType = 3 // INPLACE | COMPUTE_TYPE: split-K partial sums never in the 16-bit output type
	ltAlgoID          = 0 // CUBLASLT_ALGO_CONFIG_ID, int32
	ltAlgoTile        = 1 // CUBLASLT_ALGO_CONFIG_TILE_ID, uint32
	ltAlgoSplitK      = 2 // CUBLASLT_ALGO_CONFIG_SPLITK_NUM, int32
	ltAlgoStages      = 6 // CUBLASLT_ALGO_CONFIG_STAGES_ID, uint32
)

// openCublasLt is the cublaslt variant's path on cuda.
func openCublasLt(ctx context.Context, d *gpu.Device, g *gemmBufs) (*gemmPath, error) {
	b, err := d.BLASLt()
	if err != nil {
		return nil, err
	}
	return openLt(ctx, d, g, cudaLt(b))
}

// openHipLt is the default path on rocm.
func openHipLt(ctx context.Context, d *gpu.Device, g *gemmBufs) (*gemmPath, error) {
	b, err := d.HipBLASLt()
	if err != nil {
		return nil, err
	}
	return openLt(ctx, d, g, hipLt(b))
}

// candidates are the first n heuristic results, read through result
// (algorithm, state, workspace): state 0 is a usable one.
func candidates[A any](n int, result func(i int) (A, int32, uint64)) []ltCandidate[A] {
	out := make([]ltCandidate[A], n)
	for i := range out {
		algo, state, ws := result(i)
		out[i] = ltCandidate[A]{algo: algo, usable: state == 0, workspace: ws}
	}
	return out
}

// cudaLt is cuBLASLt as the plan sees it: cuBLAS's types and operations.
func cudaLt(b *gpu.CublasLt) *ltLib[gpu.LtAlgo] {
	return &ltLib[gpu.LtAlgo]{
		name: "cublasLt", version: b.LtVersion(), path: b.Path,
		LtDescriptors: b.LtDescriptors,
		heuristic: func(desc, la, lb, lc, pf uintptr, want int) ([]ltCandidate[gpu.LtAlgo], int32) {
			res := make([]gpu.LtHeuristic, want)
			var n int32
			code := b.Heuristic(b.H, desc, la, lb, lc, lc, pf, int32(want), &res[0], &n)
			return candidates(int(n), func(i int) (gpu.LtAlgo, int32, uint64) { return res[i].Algo, res[i].State, res[i].Workspace }), code
		},
		matmul: func(desc uintptr, alpha unsafe.Pointer, a uint64, la uintptr, bb uint64, lb uintptr, beta unsafe.Pointer,
			c uint64, lc uintptr, algo *gpu.LtAlgo, ws, wsBytes uint64, stream uintptr) int32 {
			return b.Matmul(b.H, desc, alpha, a, la, bb, lb, beta, c, lc, c, lc, algo, ws, wsBytes, stream)
		},
		describe: func(c ltCandidate[gpu.LtAlgo]) string {
			attr := func(a int32) int32 {
				var v int32
				var w uint64
				b.AlgoGet(&c.algo, a, unsafe.Pointer(&v), 4, &w)
				return v
			}
			return fmt.Sprintf("algo id %d, tile %d, split-k %d, stages %d",
				attr(ltAlgoID), attr(ltAlgoTile), attr(ltAlgoSplitK), attr(ltAlgoStages))
		},
		attrTransA: ltDescTransA, attrTransB: ltDescTransB, attrBatch: ltLayoutBatch, attrStride: ltLayoutStride,
		attrMaxWorkspace: ltPrefMaxWS, scale: gpu.CudaR32F,
		op: func(op int32) int32 { return op },
		types: func(dtype string) (int32, int32, int32) {
			t, _ := gemmTypeOf(dtype) // checked by supportsWith
			return t.in, t.out, t.compute
		},
		workspace: gpu.CublasWorkspace,
		reduce:    &[2]uint32{ltPrefReduceMask, ltReduceNoOutType},
		// the device's cuBLAS workspace and the plan's
		pathWorkspace: 2 * gpu.CublasWorkspace,
	}
}

// hipLt is hipBLASLt as the plan sees it: hipblasOperation_t takes
// rocBLAS's values (amdOp), the types are hipDataType and
// hipblasComputeType_t (rocmTypeOf), and it has no reduction preference.
func hipLt(b *gpu.HipblasLt) *ltLib[gpu.HipLtAlgo] {
	return &ltLib[gpu.HipLtAlgo]{
		name: "hipblasLt", version: b.LtVersion(), path: b.Path,
		LtDescriptors: b.LtDescriptors,
		heuristic: func(desc, la, lb, lc, pf uintptr, want int) ([]ltCandidate[gpu.HipLtAlgo], int32) {
			res := make([]gpu.HipLtHeuristic, want)
			var n int32
			code := b.Heuristic(b.H, desc, la, lb, lc, lc, pf, int32(want), &res[0], &n)
			return candidates(int(n), func(i int) (gpu.HipLtAlgo, int32, uint64) { return res[i].Algo, res[i].State, res[i].Workspace }), code
		},
		matmul: func(desc uintptr, alpha unsafe.Pointer, a uint64, la uintptr, bb uint64, lb uintptr, beta unsafe.Pointer,
			c uint64, lc uintptr, algo *gpu.HipLtAlgo, ws, wsBytes uint64, stream uintptr) int32 {
			return b.Matmul(b.H, desc, alpha, a, la, bb, lb, beta, c, lc, c, lc, algo, ws, wsBytes, stream)
		},
		describe: func(c ltCandidate[gpu.HipLtAlgo]) string {
			return fmt.Sprintf("algo bytes %s, workspace %d B", c.algo, c.workspace)
		},
		attrTransA: gpu.HipblasLtDescTransA, attrTransB: gpu.HipblasLtDescTransB,
		attrBatch: gpu.HipblasLtLayoutBatch, attrStride: gpu.HipblasLtLayoutStride,
		attrMaxWorkspace: gpu.HipblasLtPrefMaxWorkspace, scale: gpu.HipR32F,
		op: amdOp,
		types: func(dtype string) (int32, int32, int32) {
			t := rocmTypeOf(dtype)
			return t.hipIn, t.hipOut, t.hipCompute
		},
		workspace:     gpu.HipblasLtWorkspace,
		pathWorkspace: gpu.HipblasLtWorkspace,
	}
}
