package attention

// One compiled attention kernel and its device buffers (attention.go picks
// the kernel and its tiles; attention_time.go times and exports).

import (
	"fmt"
	"math"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// attnKernel is one compiled program and its device buffers.
type attnKernel struct {
	spec           Spec
	tiles          attnTiles
	mod, fn        uintptr
	q, k, v, o     gpu.Ptr
	tq, tk, tv     *gpu.TensorMap // the wgmma kernel's (wgmma.go)
	bytes          int64
	regs, local    int
	grid, smem, nt int

	// lse, when allocated (backward.go), receives each query row's saved
	// state for the backward; 0 for the forward alone.
	lse gpu.Ptr
}

// allocAttn allocates q, k, v and out (out rounded up to whole 32-bit
// words, so it can be poisoned with fill32). On the worker thread; free
// releases everything, the module included.
func allocAttn(d *gpu.Device, spec Spec) (*attnKernel, error) {
	r := d.RT
	t := spec.deviceTiles(r)
	a := &attnKernel{spec: spec, tiles: t, grid: (spec.SeqLen + t.BM - 1) / t.BM, smem: t.smemBytes(), nt: attnThreads}
	if t.Stages > 0 {
		a.nt = wgmmaThreads
	}
	qb, kvb := spec.bytes()
	var err error
	for _, p := range []struct {
		dst *gpu.Ptr
		n   int64
	}{{&a.q, qb}, {&a.k, kvb}, {&a.v, kvb}, {&a.o, r4b(qb)}} {
		if *p.dst, err = r.Alloc(p.n); err != nil {
			a.free(r)
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		a.bytes += p.n
	}
	return a, nil
}

// buildAttn compiles a's program (NVRTC, per head dim and dtype), loads it
// and allows its dynamic shared memory. On the worker thread.
func buildAttn(d *gpu.Device, a *attnKernel) error {
	r := d.RT
	var err error
	if a.tiles.Stages > 0 {
		if err := a.encodeMaps(r); err != nil {
			return err
		}
	}
	if a.mod, _, err = r.Module(a.spec.program(a.tiles)); err != nil {
		return fmt.Errorf("%s: compile: %w", a.spec, err)
	}
	if a.fn, err = r.Function(a.mod, a.tiles.kernel()); err == nil && r.SetDynSmem != nil {
		err = r.SetDynSmem(a.fn, a.smem)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", a.spec, err)
	}
	a.regs, a.local = r.FuncAttrs(a.fn)
	return nil
}

// launch enqueues one forward on the current stream.
func (a *attnKernel) launch(r *gpu.Runtime) error {
	s := a.spec
	qmul := float32(math.Log2E / math.Sqrt(float64(s.HeadDim)))
	if a.tiles.Stages > 0 {
		args := []any{a.tq, a.tk, a.tv, a.o, gpu.I32(s.Heads), gpu.I32(s.KVHeads), gpu.I32(s.SeqLen), gpu.I32(s.KVLen), gpu.I32(b2i(s.Causal)), qmul}
		if s.lse { // XW_LSE's extra argument
			args = append(args, a.lse)
		}
		return r.Launch(a.tiles.kernel(), a.fn, [3]int{a.grid, s.Heads, s.Batch}, [3]int{a.nt, 1, 1}, a.smem, args...)
	}
	return r.Launch(a.tiles.kernel(), a.fn, [3]int{a.grid, s.Heads, s.Batch}, [3]int{a.nt, 1, 1}, a.smem,
		a.q, a.k, a.v, a.o, gpu.I32(s.Heads), gpu.I32(s.KVHeads), gpu.I32(s.SeqLen), gpu.I32(s.KVLen), gpu.I32(b2i(s.Causal)), qmul, a.lse)
}

func (a *attnKernel) free(r *gpu.Runtime) {
	for _, p := range []gpu.Ptr{a.q, a.k, a.v, a.o, a.lse} {
		if p != 0 {
			r.Free(p)
		}
	}
	if a.mod != 0 {
		r.Drv.ModuleUnload(a.mod)
	}
}

// describe is the kernel's build for the timing note: a register spill
// (local bytes > 0) shows here first.
func (a *attnKernel) describe() string {
	t, unit := a.tiles, "CUDA cores"
	switch {
	case t.Stages > 0:
		sched := "serial softmax and products"
		if a.spec.WGMMAOverlap {
			sched = "softmax overlapped with the previous tile's P.v"
		}
		if a.spec.WGMMAPingPong {
			sched += ", ping-pong"
		}
		if a.spec.lse {
			sched += ", saves the rows' lse"
		}
		unit = fmt.Sprintf("tensor cores, wgmma m64nNk16 sm_90a, TMA k/v ring of %d stages, 1 producer + 2 consumer warpgroups, %s", t.Stages, sched)
	case t.MMA:
		unit = "tensor cores, mma.sync m16n8k16, cp.async k/v pipeline, ldmatrix"
		if a.spec.PlainLoads {
			unit = "tensor cores, mma.sync m16n8k16, plain loads"
		}
	}
	return fmt.Sprintf("%s (%s) %dx%d tiles, %d threads, %d B shared, %d regs, %d B local",
		t.kernel(), unit, t.BM, t.BN, a.nt, a.smem, a.regs, a.local)
}

// CompileReport compiles spec's program with NVRTC alone (no
// driver, no GPU; XBENCH_LIBNVRTC overrides where NVRTC is found) for arch
// ("sm_90") and returns ptxas's per-kernel report: registers, spill stores
// and loads, shared memory. A machine without a GPU catches compile errors
// and spills with it.
//
// An arch with the "a" suffix (sm_90a) compiles the kernel the device of
// that capability would run (tiles), the wgmma kernel included; a plain one
// (sm_90) the portable kernels, as below sm_90.
func CompileReport(spec Spec, arch string) (string, error) {
	if err := spec.check(); err != nil {
		return "", err
	}
	sm, specific := archSM(arch)
	if !specific {
		sm = min(sm, 89)
	}
	src, defines := spec.program(spec.tiles(sm))
	return gpu.NVRTCReport(src, defines, arch)
}

// HIPCompile compiles spec's attention program.
func HIPCompile(spec Spec, arch string) (gpu.HIPReport, error) {
	if err := spec.check(); err != nil {
		return gpu.HIPReport{}, err
	}
	return gpu.HIPCompile(spec.String(), spec.source(), spec.defines(), arch, spec.tiles(0).kernel())
}
