package gemm

import (
	"context"
	"fmt"
	"slices"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The libraries the product runs through, one gemmPath each: cuBLAS (cuda,
// the default), cuBLASLt (cuda, the cublaslt variant), hipBLASLt (rocm, the
// default) and rocBLAS (rocm, the rocblas variant). Each library is
// column-major, so every path takes cublasArgs' mapping (its first operand
// our B, its second our A); hipBLASLt and rocBLAS spell the operations
// 111/112 where cuBLAS has 0/1 (amdOp).

// gemmPath is one library's way to run g's product on the device.
type gemmPath struct {
	launch  func() error // enqueues one product on r.Stream
	library string       // version, for env.versions: "cublas 13.0.2"
	libPath string       // the library file
	call    string       // what one timed call is, for the result's notes
	algo    string       // the algorithm a search picked, and how ("": no search)
	wsBytes int64        // device workspace beyond A, B and C
	free    func()
}

// openPath makes mode's path for g on d (the algorithm search of the Lt
// libraries included). On the worker thread.
func openPath(ctx context.Context, d *gpu.Device, g *gemmBufs, mode Mode) (*gemmPath, error) {
	if d.RT.Kind == "rocm" {
		if mode.RocBLAS {
			return openRocblas(d, g)
		}
		return openHipLt(ctx, d, g)
	}
	if err := prepareGEMM(d, g); err != nil {
		return nil, err
	}
	if mode.Lt {
		return openCublasLt(ctx, d, g)
	}
	p := &gemmPath{launch: func() error { return runGEMM(d, g) }, library: libraryVersion(d), libPath: d.RT.BLAS.Path,
		call: "one cublasGemmStridedBatchedEx", wsBytes: gpu.CublasWorkspace, free: func() {}}
	if d.RT.BLAS.GemmSB == nil {
		p.call = fmt.Sprintf("%d cublasGemmEx calls", g.spec.Batch)
	}
	return p, nil
}

// amdOp is hipblasOperation_t / rocblas_operation for a cuBLAS operation.
func amdOp(op int32) int32 {
	if op == gpu.CublasOpT {
		return gpu.HipblasOpT
	}
	return gpu.HipblasOpN
}

// ltCandidates is how many of a heuristic's results are timed.
const ltCandidates = 8

// searchAlgos times each usable one of n candidates (one untimed call,
// then five between device events, the median) and returns the fastest's
// index (-1: none usable) and each timed one's median, for the record.
func searchAlgos(ctx context.Context, r *gpu.Runtime, what string, n int, usable func(i int) bool,
	run func(i int) error) (int, []string, error) {
	best, bestMs := -1, 0.0
	var times []string
	for i := 0; i < n; i++ {
		if !usable(i) {
			continue
		}
		s, err := r.TimedLaunches(ctx, what, func() error { return run(i) }, gpu.Calls{Warmup: 1, Repeats: 5})
		if err != nil {
			return -1, nil, err
		}
		slices.Sort(s)
		ms := s[len(s)/2]
		times = append(times, fmt.Sprintf("%.4g", ms))
		if best < 0 || ms < bestMs {
			best, bestMs = i, ms
		}
	}
	return best, times, nil
}
