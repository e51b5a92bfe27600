// Package gemm is the standalone GEMM workload on the GPU, through cuBLAS
// or cuBLASLt on cuda and hipBLASLt or rocBLAS on rocm (path.go).
//
// The product is the workload's: C[b] = op(A[b]) @ op(B[b]), row-major, A
// stored [batch, m, k] ([batch, k, m] when TransA), B stored [batch, k, n]
// ([batch, n, k] when TransB), C [batch, m, n]. Dtypes:
//
//	float32      float32 in and out, IEEE float32 products (cuBLAS pedantic
//	             math with CUBLAS_COMPUTE_32F: never TF32), float32 sums
//	tf32         float32 in and out, CUBLAS_COMPUTE_32F_FAST_TF32
//	bfloat16     bf16 in and out, CUBLAS_COMPUTE_32F (float32 sums, split-K
//	             partials too: cublasFloat32Sums)
//	float16      fp16 in and out, likewise
//	float8_e4m3  not implemented (needs cublasLt): an error
//
// API (every function is safe to call from any goroutine):
//
//	type Spec struct{ Batch, M, N, K int; TransA, TransB bool; Dtype string }
//	type Timing struct{ CompileMs; SamplesMs; PeakMemoryBytes; Device; Library; Timing }
//	func (s Spec) DeviceBytes() (int64, error) // A+B+C+workspace; compare with d.FreeBytes()
//	func GEMMSupports(d *gpu.Device, spec Spec) error
//	func Time(d *gpu.Device, ctx, spec, warmup, repeats int, seed uint64) (Timing, error)
//	func TimeCold(d *gpu.Device, ctx, spec, warmup, repeats int, seed uint64) (Timing, error) // L2 flushed before each sample
//	func TimeWith(d *gpu.Device, ctx, spec, warmup, repeats, seed, Mode{Cold, Graph}) (Timing, error)
//	func ExportGEMM(d *gpu.Device, ctx, spec, a, b []float32) ([]float32, error)
//	func GEMMAvailable() error                 // the shared "cuda" device, cuBLAS loaded
//	func Time(ctx, spec, warmup, repeats, seed, mode) (Timing, error) // on Shared("cuda")
//	func ExportGEMM(ctx, spec, a, b) ([]float32, error)                 // on Shared("cuda")
//
// Threads and contexts: a caller needs nothing special. A Device (from Open,
// or the process-wide one from Shared(kind), which the package-level
// functions use with kind "cuda") owns a worker goroutine locked to the OS
// thread where its context is current; every driver and cuBLAS call here
// runs on that worker through d.w.do, one job at a time, so GEMMs and
// Models of one Device never interleave. ctx is checked between calls (one
// product is never interrupted).
//
// cuBLAS is column-major: row-major C = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T, so cuBLAS's first operand is our B and
// its second our A (cublasArgs, a pure function with its own unit test).
// Batches of any size go through cublasGemmStridedBatchedEx; a library
// without it (the CPU emulator) gets one cublasGemmEx per batch entry. The
// cuBLAS handle and its workspace are the Device's (set up in Open), and the
// workspace counts in PeakMemoryBytes. On rocm the same column-major
// mapping goes to hipBLASLt (blaslt.go: descriptors, the heuristic's top
// algorithms timed, the fastest recorded) or, with Mode.RocBLAS, to
// rocblas_gemm_strided_batched_ex (rocblas.go); each library's workspace
// is ours and counted too.
package gemm

import (
	"errors"
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Spec is one GEMM configuration.
type Spec struct {
	Batch, M, N, K int
	TransA, TransB bool
	Dtype          string // float32, tf32, bfloat16, float16 (float8_e4m3: unsupported)
}

// Timing is what Time measured.
type Timing struct {
	// CompileMs is the first call alone, by the host clock from the call to
	// its completion: cuBLAS's heuristics, lazy kernel loading and the run.
	CompileMs float64
	// SamplesMs holds one device-event time per repeat, each around one
	// call on the handle's stream.
	SamplesMs []float64
	// PeakMemoryBytes counts A, B, C and the cuBLAS workspace.
	PeakMemoryBytes int64
	Device          result.Device
	// Library is cuBLAS's version, "cublas 13.0.2" (for env.versions).
	Library string
	// Timing says how SamplesMs was measured, for the result's notes.
	Timing string
	// Algo is the cuBLASLt algorithm the cublaslt variant picked, and how
	// ("" on the cuBLAS path).
	Algo string
}

// gemmType is how one dtype maps onto cuBLAS.
type gemmType struct {
	in, out           int32 // cudaDataType of A and B, of C
	inBytes, outBytes int
	compute           int32 // cublasComputeType_t
	math              int32 // cublasMath_t set on the handle
}

// gemmTypeOf reads gpu's dtype table; A, B and C share the dtype.
func gemmTypeOf(dtype string) (gemmType, error) {
	if dtype == "float8_e4m3" {
		return gemmType{}, fmt.Errorf("gemm dtype float8_e4m3: not implemented on the GPU (needs cublasLt matmul, not bound here)")
	}
	d, ok := gpu.DtypeOf(dtype)
	if !ok {
		return gemmType{}, fmt.Errorf("gemm: unknown dtype %q (want float32, tf32, bfloat16, float16 or float8_e4m3)", dtype)
	}
	return gemmType{d.Cuda, d.Cuda, d.Bytes, d.Bytes, d.CublasCompute, d.CublasMath}, nil
}

// gemmArgs are the arguments of one cublasGemmStridedBatchedEx call.
// cuBLAS's first operand ("A" in its documentation) is our B, its second
// ("B") our A.
type gemmArgs struct {
	opFirst, opSecond int32 // cublasOperation_t of B and of A
	m, n, k           int32 // cuBLAS's column-major m, n, k: our N, M, K
	ldFirst, ldSecond int32 // leading dimensions of B and of A
	ldc               int32
	strideFirst       int64 // elements between batch entries of B
	strideSecond      int64 // ... of A
	strideC           int64
	batch             int32
}

// cublasArgs maps a row-major spec onto cuBLAS's column-major call. A
// row-major [r, c] matrix is the column-major [c, r] one with leading
// dimension c, its transpose. cuBLAS computes the column-major [N, M]
// matrix C^T = op(B)^T op(A)^T:
//   - B stored [k, n] ('n') is, column-major, [n, k] = op(B)^T: no
//     transpose, ld n. Stored [n, k] ('t') it is [k, n] column-major, whose
//     transpose is op(B)^T: transpose, ld k.
//   - A stored [m, k] ('n') is, column-major, [k, m] = op(A)^T: no
//     transpose, ld k. Stored [k, m] ('t') it is [m, k] column-major:
//     transpose, ld m.
//   - C^T column-major [n, m] is C row-major [m, n]: ldc n.
func cublasArgs(s Spec) gemmArgs {
	g := gemmArgs{opFirst: gpu.CublasOpN, opSecond: gpu.CublasOpN, m: int32(s.N), n: int32(s.M), k: int32(s.K),
		ldFirst: int32(s.N), ldSecond: int32(s.K), ldc: int32(s.N),
		strideFirst: int64(s.K) * int64(s.N), strideSecond: int64(s.M) * int64(s.K),
		strideC: int64(s.M) * int64(s.N), batch: int32(s.Batch)}
	if s.TransB {
		g.opFirst, g.ldFirst = gpu.CublasOpT, int32(s.K)
	}
	if s.TransA {
		g.opSecond, g.ldSecond = gpu.CublasOpT, int32(s.M)
	}
	return g
}

// check validates a spec's shape: positive dimensions small enough for
// cuBLAS's int arguments.
func (s Spec) check() error {
	for _, d := range []struct {
		name string
		v    int
	}{{"batch", s.Batch}, {"m", s.M}, {"n", s.N}, {"k", s.K}} {
		if d.v < 1 || d.v > math.MaxInt32 {
			return fmt.Errorf("gemm: %s=%d out of range [1, 2^31)", d.name, d.v)
		}
	}
	return nil
}

var _ fmt.Stringer = Spec{} // messages and logs name a spec by it

func (s Spec) String() string {
	l := [2]byte{'n', 'n'}
	if s.TransA {
		l[0] = 't'
	}
	if s.TransB {
		l[1] = 't'
	}
	return fmt.Sprintf("gemm batch=%d m=%d n=%d k=%d layout=%s dtype=%s", s.Batch, s.M, s.N, s.K, l[:], s.Dtype)
}

// sizes is the bytes of A, B and C.
func (s Spec) sizes(t gemmType) (a, b, c int64) {
	B, M, N, K := int64(s.Batch), int64(s.M), int64(s.N), int64(s.K)
	return B * M * K * int64(t.inBytes), B * K * N * int64(t.inBytes), B * M * N * int64(t.outBytes)
}

// DeviceBytes is the device memory Time and ExportGEMM use for spec:
// A, B, C and the cuBLAS workspace (what PeakMemoryBytes reports), so a
// caller can compare it with FreeBytes and decline an out-of-memory run.
func (s Spec) DeviceBytes() (int64, error) {
	t, err := gemmTypeOf(s.Dtype)
	if err != nil {
		return 0, err
	}
	if err := s.check(); err != nil {
		return 0, err
	}
	a, b, c := s.sizes(t)
	return a + b + (c+3)/4*4 + gpu.CublasWorkspace, nil
}

// Supports says whether this device can run spec on its default library
// (cuBLAS on cuda, hipBLASLt on rocm), and why not.
func Supports(d *gpu.Device, spec Spec) error { return supportsWith(d, spec, Mode{}) }

// supportsWith is Supports for mode's library. A rocm library that does not
// load is found when the product opens it (openPath), with its reason.
func supportsWith(d *gpu.Device, spec Spec, mode Mode) error {
	if err := spec.check(); err != nil {
		return err
	}
	if _, err := gemmTypeOf(spec.Dtype); err != nil {
		return err
	}
	switch {
	case d.RT.Kind == "rocm" && mode.Lt:
		return errors.New("gemm through cuBLASLt needs cuda (on rocm the default path is hipBLASLt's)")
	case d.RT.Kind == "rocm" && mode.RocBLAS && rocmTypeOf(spec.Dtype).rocIn < 0:
		return fmt.Errorf("gemm dtype %s through rocBLAS: not supported (rocBLAS has xf32 only as a math mode of gfx942, not bound; hipBLASLt, the default path, runs it)", spec.Dtype)
	case d.RT.Kind == "rocm":
		return nil
	case mode.RocBLAS:
		return fmt.Errorf("gemm through rocBLAS needs rocm (this device is %s)", d.RT.Kind)
	case d.RT.BLAS == nil:
		return fmt.Errorf("gemm needs cuBLAS: %v", d.RT.BLASErr)
	}
	return nil
}
