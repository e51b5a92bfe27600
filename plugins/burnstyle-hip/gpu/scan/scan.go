// Package scan runs the scan workload's forward (docs/workloads/scan.md) on
// CUDA with our own kernel (kernels/scan.cu, compiled by NVRTC per dtype
// and semiring): one
// block per sequence, a thread per label, the loop over positions inside
// the kernel. Log and max, float32 and float64; entropy and the backward
// stay on the CPU (package cpu).
package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Spec is one scan forward on the GPU.
type Spec struct {
	cpu.ScanShape
	Dtype string // float32, float64
}

var _ fmt.Stringer = Spec{} // messages and logs name a spec by it

func (s Spec) String() string {
	return fmt.Sprintf("scan b%d T%d K%d C%d %s %s", s.Batch, s.T, s.K, s.C, s.Semiring, s.Dtype)
}

// Supported says whether the kernel runs spec, and why not.
func Supported(s Spec) error {
	if err := s.Check(); err != nil {
		return err
	}
	if s.Semiring != "log" && s.Semiring != "max" {
		return fmt.Errorf("%s: the GPU kernel has the log and max semirings (entropy runs on the CPU)", s)
	}
	if s.Dtype != "float32" && s.Dtype != "float64" {
		return fmt.Errorf("%s: dtype %q (the kernel has float32, float64)", s, s.Dtype)
	}
	if s.C > 1024 {
		return fmt.Errorf("%s: C = %d labels, the kernel takes at most 1024 (a thread each)", s, s.C)
	}
	if s.smem() > 48<<10 {
		return fmt.Errorf("%s: %d B of shared memory for K·C and C², the kernel takes at most 48 KiB", s, s.smem())
	}
	return nil
}

func (s Spec) item() int { return map[bool]int{true: 8, false: 4}[s.Dtype == "float64"] }

func (s Spec) smem() int { return (2*s.K*s.C + s.C*s.C + s.C) * s.item() }

func (s Spec) threads() int { return (s.C + 31) / 32 * 32 }

func (s Spec) source() string {
	return gpu.Program(kernelFS, "scan.cu")
}

func (s Spec) defines() []string {
	return []string{"-DXB_BF16=0", fmt.Sprintf("-DXS_F64=%d", b2i(s.Dtype == "float64")), fmt.Sprintf("-DXS_MAX=%d", b2i(s.Semiring == "max"))}
}

// encode packs values in the spec's dtype, little-endian.
func (s Spec) encode(v []float64) []byte {
	out := make([]byte, len(v)*s.item())
	for i, x := range v {
		if s.item() == 8 {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
		} else {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		}
	}
	return out
}

func (s Spec) decode(raw []byte) []float64 {
	out := make([]float64, len(raw)/s.item())
	for i := range out {
		if s.item() == 8 {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		} else {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		}
	}
	return out
}

// CompileReport compiles spec's program with NVRTC alone (no GPU) for
// arch and returns ptxas's report, as AttentionCompileReport does.
func CompileReport(spec Spec, arch string) (string, error) {
	if err := Supported(spec); err != nil {
		return "", err
	}
	return gpu.NVRTCReport(spec.source(), spec.defines(), arch)
}

// Inputs are one scan's host inputs: the cumulative scores, the
// transitions, the duration bias and each sequence's length.
type Inputs struct {
	Cum, Trans, Dur []float64
	Lengths         []int64
}

// scanKernel is one compiled program and its buffers.
type scanKernel struct {
	spec                      Spec
	mod, fn                   uintptr
	cum, trans, dur, len, out gpu.Ptr
	bytes                     int64
}

func newKernel(d *gpu.Device, spec Spec, in Inputs) (*scanKernel, error) {
	r := d.RT
	k := &scanKernel{spec: spec}
	lens := make([]byte, 8*len(in.Lengths))
	for i, l := range in.Lengths {
		binary.LittleEndian.PutUint64(lens[8*i:], uint64(l))
	}
	for _, up := range []struct {
		p *gpu.Ptr
		b []byte
	}{{&k.cum, spec.encode(in.Cum)}, {&k.trans, spec.encode(in.Trans)}, {&k.dur, spec.encode(in.Dur)}, {&k.len, lens},
		{&k.out, make([]byte, spec.Batch*spec.item())}} {
		var err error
		if *up.p, err = r.Alloc(int64(len(up.b))); err != nil {
			k.free(r)
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		k.bytes += int64(len(up.b))
		if err := r.HtoD(*up.p, up.b); err != nil {
			k.free(r)
			return nil, err
		}
	}
	return k, nil
}

func (k *scanKernel) build(r *gpu.Runtime) error {
	var err error
	if k.mod, _, err = r.Module(k.spec.source(), k.spec.defines()); err != nil {
		return fmt.Errorf("%s: compile: %w", k.spec, err)
	}
	if k.fn, err = r.Function(k.mod, "xs_scan_fwd"); err != nil {
		return fmt.Errorf("%s: %w", k.spec, err)
	}
	return nil
}

func (k *scanKernel) launch(r *gpu.Runtime) error {
	s := k.spec
	return r.Launch("xs_scan_fwd", k.fn, [3]int{s.Batch, 1, 1}, [3]int{s.threads(), 1, 1}, s.smem(),
		k.cum, k.trans, k.dur, k.len, k.out, gpu.I32(s.T), gpu.I32(s.K), gpu.I32(s.C))
}

func (k *scanKernel) free(r *gpu.Runtime) {
	for _, p := range []gpu.Ptr{k.cum, k.trans, k.dur, k.len, k.out} {
		if p != 0 {
			r.Free(p)
		}
	}
	if k.mod != 0 {
		r.Drv.ModuleUnload(k.mod)
	}
}

// ExportScan runs one forward on the given inputs and returns out [batch].
func Export(ctx context.Context, d *gpu.Device, spec Spec, in Inputs) ([]float64, error) {
	if err := Supported(spec); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw := make([]byte, spec.Batch*spec.item())
	err := d.W.Do(func() error {
		r := d.RT
		k, err := newKernel(d, spec, in)
		if err != nil {
			return err
		}
		defer k.free(r)
		if err := k.build(r); err != nil {
			return err
		}
		if err := k.launch(r); err != nil {
			r.Sync()
			return err
		}
		if err := r.Sync(); err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
		return r.DtoH(raw, k.out)
	})
	if err != nil {
		return nil, err
	}
	return spec.decode(raw), nil
}

// Timing is what Time measured.
type Timing struct {
	CompileMs       float64
	SamplesMs       []float64
	PeakMemoryBytes int64
	// MemoryBytes counts the buffers by part: "inputs" (every device
	// buffer but out) and "state" (each sequence block's shared memory: the
	// ring of K, the duration bias, the transition, one alpha row).
	MemoryBytes map[string]int64
	Timing      string
}

// Time times spec on the given inputs: the first call (NVRTC, module
// load, one launch) by the host clock as CompileMs, warmup launches
// untimed, then repeats launches each between two device events (calls).
func Time(ctx context.Context, d *gpu.Device, spec Spec, in Inputs, calls gpu.Calls) (Timing, error) {
	var out Timing
	if err := Supported(spec); err != nil {
		return out, err
	}
	if err := calls.Check(spec.String()); err != nil {
		return out, err
	}
	err := d.W.Do(func() error {
		r := d.RT
		k, err := newKernel(d, spec, in)
		if err != nil {
			return err
		}
		defer k.free(r)
		if err := r.Sync(); err != nil {
			return err
		}
		start := time.Now()
		if err := k.build(r); err != nil {
			return err
		}
		if err := k.launch(r); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return fmt.Errorf("%s: first launch: %w", spec, err)
		}
		out.CompileMs, out.PeakMemoryBytes = float64(time.Since(start).Nanoseconds())/1e6, k.bytes
		out.MemoryBytes = map[string]int64{"inputs": k.bytes - int64(spec.Batch*spec.item()), "state": int64(spec.smem()) * int64(spec.Batch)}
		out.SamplesMs, err = r.TimedLaunches(ctx, spec.String(), func() error { return k.launch(r) }, calls)
		return err
	})
	if err != nil {
		return Timing{}, err
	}
	out.Timing = fmt.Sprintf("%s, xs_scan_fwd (%d threads a sequence, %d B shared); the first call alone (NVRTC compile, module load, one launch), by the host clock, is compile_ms", d.RT.Clock(), spec.threads(), spec.smem())
	out.Timing += calls.Note()
	return out, nil
}

// HIPCompile compiles spec's scan program.
func HIPCompile(spec Spec, arch string) (gpu.HIPReport, error) {
	if err := Supported(spec); err != nil {
		return gpu.HIPReport{}, err
	}
	return gpu.HIPCompile(spec.String(), spec.source(), spec.defines(), arch, "xs_scan_fwd")
}
