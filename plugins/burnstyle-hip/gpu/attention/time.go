package attention

// Timing and export of the attention forward (attention.go), following
// TimeGEMM and ExportGEMM: every driver call on the device's worker thread,
// the first call timed alone as compile_ms, device events around each
// sample, the cold-cache flush and its synchronize outside the events.

import (
	"context"
	"fmt"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Time times spec: q, k, v from a host generator seeded by seed
// (uniform in [-1, 1), rounded to the dtype) are uploaded; the first call
// (NVRTC compile, module load and one launch) is timed alone by the host
// clock (CompileMs); warmup launches follow untimed; then repeats launches,
// each between two device events. With cold, before each sample a memset
// over a FlushBytes buffer and a synchronize run outside the events.
func Time(ctx context.Context, d *gpu.Device, spec Spec, calls gpu.Calls, seed uint64) (Timing, error) {
	var out Timing
	if err := Supports(d, spec); err != nil {
		return out, err
	}
	if err := calls.Check(spec.String()); err != nil {
		return out, err
	}
	hq, hk, hv, _ := seededInputs(spec, seed, false)
	if err := ctx.Err(); err != nil {
		return out, err
	}
	var build string
	err := d.W.Do(func() error {
		r := d.RT
		// The first call is compile + one launch: allocation and the
		// uploads come before its clock starts, as TimeGEMM's do.
		a, err := allocAttn(d, spec)
		if err != nil {
			return err
		}
		defer a.free(r)
		for _, up := range []struct {
			p gpu.Ptr
			b []byte
		}{{a.q, hq}, {a.k, hk}, {a.v, hv}} {
			if err := r.HtoD(up.p, up.b); err != nil {
				return err
			}
		}
		if err := r.Sync(); err != nil {
			return err
		}
		start := time.Now()
		if err := buildAttn(d, a); err != nil {
			return err
		}
		if err := a.launch(r); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return fmt.Errorf("%s: first launch: %w", spec, err)
		}
		out.CompileMs = float64(time.Since(start).Nanoseconds()) / 1e6
		out.PeakMemoryBytes, build = a.bytes, a.describe()
		out.SamplesMs, err = r.TimedLaunches(ctx, spec.String(), func() error { return a.launch(r) }, calls)
		return err
	})
	if err != nil {
		return Timing{}, err
	}
	out.Device, out.Kernel = d.Info(), build
	out.Timing = timingNote(d, build, "one launch", "", calls)
	return out, nil
}

// seededInputs are the workload's q, k, v and, with grad, dout on the host
// in the dtype: PCG streams 1 to 4 of the seed
// (docs/workloads/attention.md), the same for the forward and the backward.
func seededInputs(spec Spec, seed uint64, grad bool) (q, k, v, dout []byte) {
	_, dt, _, _ := attnDtypeCode(spec.Dtype)
	q = gpu.Encode(gpu.RandomInputs(spec.QLen(), seed, 1), dt)
	k = gpu.Encode(gpu.RandomInputs(spec.KLen(), seed, 2), dt)
	v = gpu.Encode(gpu.RandomInputs(spec.KLen(), seed, 3), dt)
	if grad {
		dout = gpu.Encode(gpu.RandomInputs(spec.QLen(), seed, 4), dt)
	}
	return q, k, v, dout
}

// timingNote is a result's env.timing: the clock, the build, what the first
// (compile) call held, what a sample is where it is not one call (sample),
// and the cold-L2 flush.
func timingNote(d *gpu.Device, build, first, sample string, calls gpu.Calls) string {
	note := d.RT.Clock() + ", " + build + "; the first call alone (NVRTC compile, module load, " + first + "), by the host clock, is compile_ms"
	if sample != "" {
		note += "; " + sample
	}
	note += calls.Note()
	return note
}

// ExportAttention uploads q, k, v (rounded to bfloat16 or float16 on the
// host for those dtypes), runs one forward and returns out as float32
// [batch, heads, seq_len, head_dim] (widened exactly from a 16-bit out).
// out is poisoned with NaN first, so an element the kernel misses shows.
func Export(ctx context.Context, d *gpu.Device, spec Spec, q, k, v []float32) ([]float32, error) {
	if err := Supports(d, spec); err != nil {
		return nil, err
	}
	if len(q) != spec.QLen() || len(k) != spec.KLen() || len(v) != spec.KLen() {
		return nil, fmt.Errorf("%s: q, k, v have %d, %d, %d elements; want %d, %d, %d",
			spec, len(q), len(k), len(v), spec.QLen(), spec.KLen(), spec.KLen())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, dt, _, _ := attnDtypeCode(spec.Dtype)
	hq, hk, hv := gpu.Encode(q, dt), gpu.Encode(k, dt), gpu.Encode(v, dt)
	raw := make([]byte, len(hq))
	err := d.W.Do(func() error {
		r := d.RT
		a, err := allocAttn(d, spec)
		if err != nil {
			return err
		}
		defer a.free(r)
		if err := buildAttn(d, a); err != nil {
			return err
		}
		for _, up := range []struct {
			p gpu.Ptr
			b []byte
		}{{a.q, hq}, {a.k, hk}, {a.v, hv}} {
			if err := r.HtoD(up.p, up.b); err != nil {
				return err
			}
		}
		if err := r.Fill32(a.o, gpu.NaNWord(dt), r4b(int64(len(hq)))/4); err != nil {
			return err
		}
		if err := a.launch(r); err != nil {
			r.Sync()
			return err
		}
		if err := r.Sync(); err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
		return r.DtoH(raw, a.o)
	})
	if err != nil {
		return nil, err
	}
	return gpu.Decode(raw, dt), nil
}

// TimeShared is Time on Shared("cuda").
func TimeShared(ctx context.Context, spec Spec, calls gpu.Calls, seed uint64) (Timing, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return Timing{}, err
	}
	return Time(ctx, d, spec, calls, seed)
}

// ExportShared is Export on Shared("cuda").
func ExportShared(ctx context.Context, spec Spec, q, k, v []float32) ([]float32, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return nil, err
	}
	return Export(ctx, d, spec, q, k, v)
}

// Supported is nil when the process-wide CUDA device opens and
// accepts spec; otherwise the reason.
func Supported(spec Spec) error {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return err
	}
	return Supports(d, spec)
}
