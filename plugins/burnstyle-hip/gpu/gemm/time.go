package gemm

import (
	"context"
	"fmt"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Timing the product: the first call alone, then the runtime's timing loop.

// Time times spec: inputs from a host generator seeded by seed (uniform
// in [-1, 1), rounded to the dtype) are uploaded, the first call is timed
// alone (CompileMs), warmup calls follow untimed, then repeats calls each
// between two device events.
func Time(ctx context.Context, d *gpu.Device, spec Spec, warmup, repeats int, seed uint64) (Timing, error) {
	return TimeWith(ctx, d, spec, warmup, repeats, seed, Mode{})
}

// Mode is how TimeWith times: Cold flushes L2 before each timed
// call (--cold-cache); Graph captures the cuBLAS call once as a CUDA graph
// and times its replays (--cuda-graph), which leaves the host's per-call
// work (purego, cuBLAS's own dispatch) out of the samples.
//
// Lt (the gemm workload's cublaslt variant) runs the product through
// cublasLtMatmul with the fastest of the heuristic's top algorithms, timed
// on the device before the first call (blaslt.go); Algo records it. On rocm
// the product runs through hipBLASLt the same way (the same plan), and RocBLAS
// (the rocblas variant) through rocblas_gemm_strided_batched_ex instead.
type Mode struct{ Cold, Graph, Lt, RocBLAS bool }

// TimeWith is Time in mode.
func TimeWith(ctx context.Context, d *gpu.Device, spec Spec, warmup, repeats int, seed uint64, mode Mode) (Timing, error) {
	return timeGEMM(ctx, d, spec, gpu.Calls{Warmup: warmup, Repeats: repeats, ColdCache: mode.Cold}, seed, mode)
}

// TimeCold is Time with a cold L2 (--cold-cache): before each timed
// call a memset over a FlushBytes buffer (allocated once per call of
// TimeCold, not counted in PeakMemoryBytes) and a context synchronize,
// both before the start event, so the write is never in a sample.
func TimeCold(ctx context.Context, d *gpu.Device, spec Spec, warmup, repeats int, seed uint64) (Timing, error) {
	return TimeWith(ctx, d, spec, warmup, repeats, seed, Mode{Cold: true})
}

func timeGEMM(ctx context.Context, d *gpu.Device, spec Spec, calls gpu.Calls, seed uint64, mode Mode) (Timing, error) {
	var out Timing
	var call, libPath string
	if err := supportsWith(d, spec, mode); err != nil {
		return out, err
	}
	if err := calls.Check("gemm"); err != nil {
		return out, err
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
		if err := r.HtoD(g.a, ha); err != nil {
			return err
		}
		if err := r.HtoD(g.b, hb); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		start := time.Now() // an Lt library's algorithm search is part of the first call
		p, err := openPath(ctx, d, g, mode)
		if err != nil {
			return err
		}
		defer p.free()
		out.PeakMemoryBytes = g.bytes + p.wsBytes
		out.Library, out.Algo, call, libPath = p.library, p.algo, p.call, p.libPath
		launch := p.launch
		if err := launch(); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		out.CompileMs = float64(time.Since(start).Nanoseconds()) / 1e6
		if mode.Graph {
			c, err := r.CaptureCall(launch)
			if err != nil {
				return err
			}
			defer r.DestroyCaptured(c)
			r.Stream = c.Stream // the events go where the replays run
			defer func() { r.Stream = 0 }()
			launch = func() error { return r.Check("graph launch", r.Graph.Launch(c.Exec, c.Stream)) }
		}
		out.SamplesMs, err = r.TimedLaunches(ctx, "gemm", launch, calls)
		return err
	})
	if err != nil {
		return Timing{}, err
	}
	out.Device = d.Info()
	out.Timing = fmt.Sprintf("%s (%s, %s from %s); the first call alone, by the host clock, is compile_ms",
		d.RT.Clock(), call, out.Library, libPath)
	if out.Algo != "" {
		out.Timing += " (with the algorithm search before it)"
	}
	if mode.Graph {
		out.Timing += fmt.Sprintf("; each timed call one replay of that call captured once as a %s graph",
			map[string]string{"cuda": "CUDA", "rocm": "HIP"}[d.RT.Kind])
	}
	out.Timing += calls.Note()
	return out, nil
}
