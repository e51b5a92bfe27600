package attention

// Timing and export of the backward phases (backward.go), as Time and
// Export do the forward's.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// TimeGrad times phase "backward" (the three backward kernels, after one
// forward that saved out and the row statistics before the first call) or
// "both" (the forward and the backward). Inputs as Time's, dout seeded the
// same way; the first call (NVRTC compile, module load, one call of the
// phase, the saving forward included for backward) is CompileMs.
func TimeGrad(ctx context.Context, d *gpu.Device, spec Spec, phase string, calls gpu.Calls, seed uint64) (Timing, error) {
	var out Timing
	if phase != "backward" && phase != "both" {
		return out, fmt.Errorf("%s: phase %q (want backward or both)", spec, phase)
	}
	if err := checkGrad(d, spec); err != nil {
		return out, err
	}
	if err := calls.Check(spec.String()); err != nil {
		return out, err
	}
	hq, hk, hv, hg := seededInputs(spec, seed, true)
	if err := ctx.Err(); err != nil {
		return out, err
	}
	var build string
	err := withGrad(d, spec, hq, hk, hv, hg, func(r *gpu.Runtime, g *gradKernel) error {
		call := g.launchBackward
		if phase == "both" {
			call = func(r *gpu.Runtime) error {
				if err := g.fwd.launch(r); err != nil {
					return err
				}
				return g.launchBackward(r)
			}
		}
		start := time.Now()
		if err := buildGrad(d, g); err != nil {
			return err
		}
		if phase == "backward" { // the saved state, made once
			if err := g.fwd.launch(r); err != nil {
				return err
			}
		}
		if err := call(r); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return fmt.Errorf("%s %s: first call: %w", spec, phase, err)
		}
		out.CompileMs = float64(time.Since(start).Nanoseconds()) / 1e6
		out.PeakMemoryBytes, build = g.fwd.bytes, g.describe()
		samples, err := r.TimedLaunches(ctx, spec.String()+" "+phase, func() error { return call(r) }, calls)
		out.SamplesMs = samples
		return err
	})
	if err != nil {
		return Timing{}, err
	}
	out.Device, out.Kernel = d.Info(), build
	sample := ""
	if phase == "backward" {
		sample = "each sample is the backward alone (D = rowsum(dout*out), the main kernel, dq to the dtype) after one forward made before timing"
	}
	out.Timing = timingNote(d, build, "one call", sample, calls)
	return out, nil
}

// upload copies q, k, v and dout to the device and waits.
func upload(r *gpu.Runtime, g *gradKernel, hq, hk, hv, hg []byte) error {
	for _, up := range []struct {
		p gpu.Ptr
		b []byte
	}{{g.fwd.q, hq}, {g.fwd.k, hk}, {g.fwd.v, hv}, {g.dout, hg}} {
		if err := r.HtoD(up.p, up.b); err != nil {
			return err
		}
	}
	return r.Sync()
}

// withGrad runs fn on the device's worker thread with the backward's
// buffers allocated and q, k, v, dout (encoded in the dtype) uploaded, and
// frees them after: the common start of TimeGrad, TimeGradParts and
// ExportGrad.
func withGrad(d *gpu.Device, spec Spec, hq, hk, hv, hg []byte, fn func(r *gpu.Runtime, g *gradKernel) error) error {
	return d.W.Do(func() error {
		r := d.RT
		g, err := allocGrad(d, spec)
		if err != nil {
			return err
		}
		defer g.free(r)
		if err := upload(r, g, hq, hk, hv, hg); err != nil {
			return err
		}
		return fn(r, g)
	})
}

// ExportGrad uploads q, k, v and dout (rounded to the dtype), runs one
// forward and one backward and returns out, dq, dk, dv as float32 in the
// workload's shapes. Every output is poisoned with NaN first, so an element
// a kernel misses shows.
func ExportGrad(ctx context.Context, d *gpu.Device, spec Spec, q, k, v, dout []float32) (out, dq, dk, dv []float32, err error) {
	e, err := exportGrad(ctx, d, spec, q, k, v, dout)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return e.out, e.dq, e.dk, e.dv, nil
}

// gradExport is exportGrad's result: ExportGrad's four, the rows' saved
// lse ([B, H, S], log2 units as xa_lse) and the build (describe).
type gradExport struct {
	out, dq, dk, dv, lse []float32
	build                string
}

func exportGrad(ctx context.Context, d *gpu.Device, spec Spec, q, k, v, dout []float32) (gradExport, error) {
	var e gradExport
	if err := checkGrad(d, spec); err != nil {
		return e, err
	}
	if len(q) != spec.QLen() || len(k) != spec.KLen() || len(v) != spec.KLen() || len(dout) != spec.QLen() {
		return e, fmt.Errorf("%s backward: q, k, v, dout have %d, %d, %d, %d elements; want %d, %d, %d, %d",
			spec, len(q), len(k), len(v), len(dout), spec.QLen(), spec.KLen(), spec.KLen(), spec.QLen())
	}
	if err := ctx.Err(); err != nil {
		return e, err
	}
	_, dt, _, _ := attnDtypeCode(spec.Dtype)
	hq, hk, hv, hg := gpu.Encode(q, dt), gpu.Encode(k, dt), gpu.Encode(v, dt), gpu.Encode(dout, dt)
	raw := [5][]byte{make([]byte, len(hq)), make([]byte, len(hq)), make([]byte, len(hk)), make([]byte, len(hk)),
		make([]byte, 4*spec.Batch*spec.Heads*spec.SeqLen)}
	err := withGrad(d, spec, hq, hk, hv, hg, func(r *gpu.Runtime, g *gradKernel) error {
		if err := buildGrad(d, g); err != nil {
			return err
		}
		dst := [5]gpu.Ptr{g.fwd.o, g.dq, g.dk, g.dv, g.fwd.lse}
		for i, p := range dst {
			word := gpu.NaNWord(dt)
			if i == 4 {
				word = gpu.NaNWord(gpu.CudaR32F)
			}
			if err := r.Fill32(p, word, r4b(int64(len(raw[i])))/4); err != nil {
				return err
			}
		}
		err := g.fwd.launch(r)
		if err == nil {
			err = g.launchBackward(r)
		}
		if err != nil {
			r.Sync()
			return err
		}
		if err := r.Sync(); err != nil {
			return fmt.Errorf("%s backward: %w", spec, err)
		}
		for i, p := range dst {
			if err := r.DtoH(raw[i], p); err != nil {
				return err
			}
		}
		e.build = g.describe()
		return nil
	})
	if err != nil {
		return gradExport{}, err
	}
	e.out, e.dq, e.dk, e.dv = gpu.Decode(raw[0], dt), gpu.Decode(raw[1], dt), gpu.Decode(raw[2], dt), gpu.Decode(raw[3], dt)
	e.lse = gpu.Decode(raw[4], gpu.CudaR32F)
	return e, nil
}

// TimeGradShared is TimeGrad on Shared("cuda").
func TimeGradShared(ctx context.Context, spec Spec, phase string, calls gpu.Calls, seed uint64) (Timing, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return Timing{}, err
	}
	return TimeGrad(ctx, d, spec, phase, calls, seed)
}

// ExportGradShared is ExportGrad on Shared("cuda").
func ExportGradShared(ctx context.Context, spec Spec, q, k, v, dout []float32) (out, dq, dk, dv []float32, err error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return ExportGrad(ctx, d, spec, q, k, v, dout)
}

// SupportedGrad is nil when the process-wide CUDA device opens and can run
// the backward phases of spec; otherwise the reason.
func SupportedGrad(spec Spec) error {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return err
	}
	return checkGrad(d, spec)
}

// GradPart is one backward kernel's median time (ms, warm L2).
type GradPart struct {
	Kernel string
	Ms     float64
}

// TimeGradParts times each backward kernel alone, repeats launches each
// after one warmup, following one forward and one whole backward: where the
// backward's time goes (TestGPUAttentionGrad logs it). The main kernel
// re-adds into dq32 each time, which changes its values, not its work.
func TimeGradParts(ctx context.Context, d *gpu.Device, spec Spec, repeats int, seed uint64) ([]GradPart, error) {
	if err := checkGrad(d, spec); err != nil {
		return nil, err
	}
	hq, hk, hv, hg := seededInputs(spec, seed, true)
	var out []GradPart
	err := withGrad(d, spec, hq, hk, hv, hg, func(r *gpu.Runtime, g *gradKernel) error {
		if err := buildGrad(d, g); err != nil {
			return err
		}
		err := g.fwd.launch(r)
		if err == nil {
			err = g.launchBackward(r)
		}
		if err != nil {
			r.Sync()
			return err
		}
		for _, p := range g.parts() {
			ms, err := r.TimedLaunches(ctx, spec.String()+" "+p.name, func() error { return p.fn(r) }, gpu.Calls{Warmup: 1, Repeats: repeats})
			if err != nil {
				return err
			}
			out = append(out, GradPart{p.name, slices.Sorted(slices.Values(ms))[len(ms)/2]})
		}
		return nil
	})
	return out, err
}
