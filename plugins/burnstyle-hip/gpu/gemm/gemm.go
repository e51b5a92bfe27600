// Package gemm is the standalone GEMM workload on the GPU, through cuBLAS.
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
//	type GEMMSpec struct{ Batch, M, N, K int; TransA, TransB bool; Dtype string }
//	type GEMMTiming struct{ CompileMs; SamplesMs; PeakMemoryBytes; Device; Library; Timing }
//	func (s GEMMSpec) DeviceBytes() (int64, error) // A+B+C+workspace; compare with d.FreeBytes()
//	func GEMMSupports(d *gpu.Device, spec GEMMSpec) error
//	func TimeGEMM(d *gpu.Device, ctx, spec, warmup, repeats int, seed uint64) (GEMMTiming, error)
//	func TimeGEMMCold(d *gpu.Device, ctx, spec, warmup, repeats int, seed uint64) (GEMMTiming, error) // L2 flushed before each sample
//	func TimeGEMMWith(d *gpu.Device, ctx, spec, warmup, repeats, seed, GEMMMode{Cold, Graph}) (GEMMTiming, error)
//	func ExportGEMM(d *gpu.Device, ctx, spec, a, b []float32) ([]float32, error)
//	func GEMMAvailable() error                 // the shared "cuda" device, cuBLAS loaded
//	func TimeGEMM(ctx, spec, warmup, repeats, seed, mode) (GEMMTiming, error) // on Shared("cuda")
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
// workspace counts in PeakMemoryBytes. ROCm devices answer "gemm on rocm is
// not implemented": this package binds no hipBLAS/rocBLAS.
package gemm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// GEMMSpec is one GEMM configuration.
type Spec struct {
	Batch, M, N, K int
	TransA, TransB bool
	Dtype          string // float32, tf32, bfloat16, float16 (float8_e4m3: unsupported)
}

// GEMMTiming is what TimeGEMM measured.
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

// errGEMMRocm is the answer on a ROCm device.
var errGEMMRocm = errors.New("gemm on rocm is not implemented (no hipBLAS/rocBLAS binding in this backend)")

// gemmType is how one dtype maps onto cuBLAS.
type gemmType struct {
	in, out           int32 // cudaDataType of A and B, of C
	inBytes, outBytes int
	compute           int32 // cublasComputeType_t
	math              int32 // cublasMath_t set on the handle
}

func gemmTypeOf(dtype string) (gemmType, error) {
	switch dtype {
	case "float32":
		return gemmType{gpu.CudaR32F, gpu.CudaR32F, 4, 4, gpu.CublasCompute32F, gpu.CublasPedanticMath}, nil
	case "tf32":
		return gemmType{gpu.CudaR32F, gpu.CudaR32F, 4, 4, gpu.CublasCompute32FFastTF32, gpu.CublasDefaultMath}, nil
	case "bfloat16":
		return gemmType{gpu.CudaR16BF, gpu.CudaR16BF, 2, 2, gpu.CublasCompute32F, gpu.CublasFloat32Sums}, nil
	case "float16":
		return gemmType{gpu.CudaR16F, gpu.CudaR16F, 2, 2, gpu.CublasCompute32F, gpu.CublasFloat32Sums}, nil
	case "float8_e4m3":
		return gemmType{}, fmt.Errorf("gemm dtype float8_e4m3: not implemented on the GPU (needs cublasLt matmul, not bound here)")
	}
	return gemmType{}, fmt.Errorf("gemm: unknown dtype %q (want float32, tf32, bfloat16, float16 or float8_e4m3)", dtype)
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

// DeviceBytes is the device memory TimeGEMM and ExportGEMM use for spec:
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

// GEMMSupports says whether this device can run spec, and why not.
func Supports(d *gpu.Device, spec Spec) error {
	if err := spec.check(); err != nil {
		return err
	}
	if _, err := gemmTypeOf(spec.Dtype); err != nil {
		return err
	}
	if d.RT.Kind != "cuda" {
		return errGEMMRocm
	}
	if d.RT.BLAS == nil {
		return fmt.Errorf("gemm needs cuBLAS: %v", d.RT.BLASErr)
	}
	return nil
}

// gemmBufs are one product's device buffers.
type gemmBufs struct {
	a, b, c gpu.Ptr
	t       gemmType
	spec    Spec
	args    gemmArgs
	bytes   int64 // A + B + C
}

// allocGEMM allocates A, B and C (C rounded up to whole 32-bit words, so
// it can be poisoned with fill32). On the worker thread.
func allocGEMM(d *gpu.Device, spec Spec, t gemmType) (*gemmBufs, error) {
	r := d.RT
	na, nb, nc := spec.sizes(t)
	nc = (nc + 3) / 4 * 4
	g := &gemmBufs{t: t, spec: spec, args: cublasArgs(spec), bytes: na + nb + nc}
	var err error
	if g.a, err = r.Alloc(na); err == nil {
		if g.b, err = r.Alloc(nb); err == nil {
			g.c, err = r.Alloc(nc)
		}
	}
	if err != nil {
		g.free(r)
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	return g, nil
}

func (g *gemmBufs) free(r *gpu.Runtime) {
	for _, p := range []gpu.Ptr{g.a, g.b, g.c} {
		if p != 0 {
			r.Free(p)
		}
	}
}

// prepare sets the handle's math mode and stream for g's dtype; the Models
// of the device set their own before each of their calls.
func prepareGEMM(d *gpu.Device, g *gemmBufs) error {
	b := d.RT.BLAS
	if err := b.Check("set math mode", b.SetMathMode(b.H, g.t.math)); err != nil {
		return err
	}
	return b.Check("set stream", b.SetStream(b.H, d.RT.Stream))
}

// run enqueues one product C = op(A) op(B). On the worker thread.
func runGEMM(d *gpu.Device, g *gemmBufs) error {
	b := d.RT.BLAS
	alpha, beta := float32(1), float32(0)
	x := g.args
	t := g.t
	if b.GemmSB != nil {
		return b.Check(g.spec.String(), b.GemmSB(b.H, x.opFirst, x.opSecond, x.m, x.n, x.k, unsafe.Pointer(&alpha),
			uint64(g.b), t.in, x.ldFirst, x.strideFirst, uint64(g.a), t.in, x.ldSecond, x.strideSecond,
			unsafe.Pointer(&beta), uint64(g.c), t.out, x.ldc, x.strideC, x.batch, t.compute, gpu.CublasGemmDefault))
	}
	in, out := int64(t.inBytes), int64(t.outBytes)
	for i := int64(0); i < int64(x.batch); i++ {
		if err := b.Check(g.spec.String(), b.GemmEx(b.H, x.opFirst, x.opSecond, x.m, x.n, x.k, unsafe.Pointer(&alpha),
			uint64(g.b)+uint64(i*x.strideFirst*in), t.in, x.ldFirst,
			uint64(g.a)+uint64(i*x.strideSecond*in), t.in, x.ldSecond, unsafe.Pointer(&beta),
			uint64(g.c)+uint64(i*x.strideC*out), t.out, x.ldc, t.compute, gpu.CublasGemmDefault)); err != nil {
			return err
		}
	}
	return nil
}

// libraryVersion is "cublas MAJOR.MINOR.PATCH" from cublasGetVersion
// (major*10000 + minor*100 + patch). On the worker thread.
func libraryVersion(d *gpu.Device) string {
	b := d.RT.BLAS
	var v int32
	if b.Version(b.H, &v) != 0 {
		return "cublas (version unknown)"
	}
	return fmt.Sprintf("cublas %d.%d.%d", v/10000, v%10000/100, v%100)
}

// TimeGEMM times spec: inputs from a host generator seeded by seed (uniform
// in [-1, 1), rounded to the dtype) are uploaded, the first call is timed
// alone (CompileMs), warmup calls follow untimed, then repeats calls each
// between two device events.
func Time(ctx context.Context, d *gpu.Device, spec Spec, warmup, repeats int, seed uint64) (Timing, error) {
	return TimeWith(ctx, d, spec, warmup, repeats, seed, Mode{})
}

// GEMMMode is how TimeGEMMWith times: Cold flushes L2 before each timed
// call (--cold-cache); Graph captures the cuBLAS call once as a CUDA graph
// and times its replays (--cuda-graph), which leaves the host's per-call
// work (purego, cuBLAS's own dispatch) out of the samples.
//
// Lt (the gemm workload's cublaslt variant) runs the product through
// cublasLtMatmul with the fastest of the heuristic's top algorithms, timed
// on the device before the first call (cublaslt.go); Algo records it.
type Mode struct{ Cold, Graph, Lt bool }

// TimeGEMMWith is TimeGEMM in mode.
func TimeWith(ctx context.Context, d *gpu.Device, spec Spec, warmup, repeats int, seed uint64, mode Mode) (Timing, error) {
	var flush int64
	if mode.Cold {
		flush = gpu.FlushBytes
	}
	return timeGEMM(ctx, d, spec, warmup, repeats, seed, flush, mode.Graph, mode.Lt)
}

// TimeGEMMCold is TimeGEMM with a cold L2 (--cold-cache): before each timed
// call a memset over a FlushBytes buffer (allocated once per call of
// TimeGEMMCold, not counted in PeakMemoryBytes) and a context synchronize,
// both before the start event, so the write is never in a sample.
func TimeCold(ctx context.Context, d *gpu.Device, spec Spec, warmup, repeats int, seed uint64) (Timing, error) {
	return TimeWith(ctx, d, spec, warmup, repeats, seed, Mode{Cold: true})
}

func timeGEMM(ctx context.Context, d *gpu.Device, spec Spec, warmup, repeats int, seed uint64, flushBytes int64, graph, lt bool) (Timing, error) {
	var out Timing
	var ltPath string // the cuBLASLt library, with lt
	if err := Supports(d, spec); err != nil {
		return out, err
	}
	if warmup < 0 || repeats < 1 {
		return out, fmt.Errorf("gemm: warmup=%d repeats=%d (want warmup >= 0, repeats >= 1)", warmup, repeats)
	}
	t, _ := gemmTypeOf(spec.Dtype)
	B, M, N, K := spec.Batch, spec.M, spec.N, spec.K
	ha := gpu.Encode(gpu.RandomInputs(B*M*K, seed, 1), t.in)
	hb := gpu.Encode(gpu.RandomInputs(B*K*N, seed, 2), t.in)
	if err := ctx.Err(); err != nil {
		return out, err
	}
	err := d.W.Do(func() error {
		r := d.RT
		g, err := allocGEMM(d, spec, t)
		if err != nil {
			return err
		}
		defer g.free(r)
		out.PeakMemoryBytes = g.bytes + gpu.CublasWorkspace
		out.Library = libraryVersion(d)
		if err := r.HtoD(g.a, ha); err != nil {
			return err
		}
		if err := r.HtoD(g.b, hb); err != nil {
			return err
		}
		if err := prepareGEMM(d, g); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		start := time.Now()
		launch := func() error { return runGEMM(d, g) }
		if lt { // the algorithm search is part of the first call
			p, err := newLtPlan(d, g)
			if err != nil {
				return err
			}
			defer p.free(r)
			out.PeakMemoryBytes += gpu.CublasWorkspace
			if err := p.pick(ctx, r, g); err != nil {
				return err
			}
			out.Algo, out.Library, ltPath = p.picked, p.b.LtVersion(), p.b.Path
			launch = func() error { return p.run(r, g, &p.algo) }
		}
		if err := launch(); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		out.CompileMs = float64(time.Since(start).Nanoseconds()) / 1e6
		if graph {
			c, err := r.CaptureCall(launch)
			if err != nil {
				return err
			}
			defer r.DestroyCaptured(c)
			r.Stream = c.Stream // the events go where the replays run
			defer func() { r.Stream = 0 }()
			launch = func() error { return r.Check("graph launch", r.Graph.Launch(c.Exec, c.Stream)) }
		}
		out.SamplesMs, err = r.TimedLaunches(ctx, "gemm", launch, warmup, repeats, flushBytes)
		return err
	})
	if err != nil {
		return Timing{}, err
	}
	out.Device = d.Info()
	call, path := "one cublasGemmStridedBatchedEx", d.RT.BLAS.Path
	if d.RT.BLAS.GemmSB == nil {
		call = fmt.Sprintf("%d cublasGemmEx calls", B)
	}
	if lt {
		call, path = "one cublasLtMatmul with "+out.Algo, ltPath
	}
	out.Timing = fmt.Sprintf("%s (%s, %s from %s); the first call alone, by the host clock, is compile_ms",
		gpu.ClockWord(d.RT.LastHeld), call, out.Library, path)
	if lt {
		out.Timing += " (with the algorithm search before it)"
	}
	if graph {
		out.Timing += "; each timed call one replay of that call captured once as a CUDA graph"
	}
	if flushBytes > 0 {
		out.Timing += fmt.Sprintf("; before each timed call a %d MiB memset and a synchronize, outside the events (cold L2)", flushBytes>>20)
	}
	return out, nil
}

// ExportGEMM uploads a and b (rounded to bfloat16 or float16 on the host for
// those dtypes), runs one product and returns C as float32 [batch, m, n]
// (widened exactly from a 16-bit C). C is poisoned with NaN first, so an
// element the product misses shows.
func Export(ctx context.Context, d *gpu.Device, spec Spec, a, b []float32) ([]float32, error) {
	return ExportWith(ctx, d, spec, a, b, Mode{})
}

// ExportGEMMWith is ExportGEMM through mode's library (mode.Lt: cuBLASLt
// with the algorithm TimeGEMMWith would pick); Cold and Graph do not apply.
func ExportWith(ctx context.Context, d *gpu.Device, spec Spec, a, b []float32, mode Mode) ([]float32, error) {
	if err := Supports(d, spec); err != nil {
		return nil, err
	}
	B, M, N, K := spec.Batch, spec.M, spec.N, spec.K
	if len(a) != B*M*K || len(b) != B*K*N {
		return nil, fmt.Errorf("%s: A has %d elements and B %d; want %d and %d", spec, len(a), len(b), B*M*K, B*K*N)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, _ := gemmTypeOf(spec.Dtype)
	ha, hb := gpu.Encode(a, t.in), gpu.Encode(b, t.in)
	raw := make([]byte, int64(B)*int64(M)*int64(N)*int64(t.outBytes))
	err := d.W.Do(func() error {
		r := d.RT
		g, err := allocGEMM(d, spec, t)
		if err != nil {
			return err
		}
		defer g.free(r)
		if err := r.HtoD(g.a, ha); err != nil {
			return err
		}
		if err := r.HtoD(g.b, hb); err != nil {
			return err
		}
		_, _, nc := spec.sizes(t)
		if err := r.Fill32(g.c, gpu.NaNWord(t.out), (nc+3)/4); err != nil {
			return err
		}
		if err := prepareGEMM(d, g); err != nil {
			return err
		}
		run := func() error { return runGEMM(d, g) }
		if mode.Lt {
			p, err := newLtPlan(d, g)
			if err != nil {
				return err
			}
			defer p.free(r)
			if err := p.pick(ctx, r, g); err != nil {
				return err
			}
			if err := r.Fill32(g.c, gpu.NaNWord(t.out), (nc+3)/4); err != nil { // the search wrote C
				return err
			}
			run = func() error { return p.run(r, g, &p.algo) }
		}
		if err := run(); err != nil {
			r.Sync()
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		return r.DtoH(raw, g.c)
	})
	if err != nil {
		return nil, err
	}
	return gpu.Decode(raw, t.out), nil
}

// Available is nil when the process-wide CUDA device (Shared("cuda"))
// opens and cuBLAS loaded on it; otherwise the reason.
func Available() error {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return err
	}
	if d.RT.BLAS == nil {
		return fmt.Errorf("gemm needs cuBLAS: %v", d.RT.BLASErr)
	}
	return nil
}

// TimeShared is TimeWith on gpu.Shared("cuda").
func TimeShared(ctx context.Context, spec Spec, warmup, repeats int, seed uint64, mode Mode) (Timing, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return Timing{}, err
	}
	return TimeWith(ctx, d, spec, warmup, repeats, seed, mode)
}

// ExportShared is Export on gpu.Shared("cuda").
func ExportShared(ctx context.Context, spec Spec, a, b []float32) ([]float32, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return nil, err
	}
	return Export(ctx, d, spec, a, b)
}
