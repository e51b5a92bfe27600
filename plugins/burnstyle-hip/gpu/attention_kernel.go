package gpu

// One compiled attention kernel and its device buffers (attention.go picks
// the kernel and its tiles; attention_time.go times and exports).

import (
	"fmt"
	"math"
)

// attnKernel is one compiled program and its device buffers.
type attnKernel struct {
	spec           AttentionSpec
	tiles          attnTiles
	mod, fn        uintptr
	q, k, v, o     devPtr
	bytes          int64
	regs, local    int
	grid, smem, nt int
}

// allocAttn allocates q, k, v and out (out rounded up to whole 32-bit
// words, so it can be poisoned with fill32). On the worker thread; free
// releases everything, the module included.
func (d *Device) allocAttn(spec AttentionSpec) (*attnKernel, error) {
	r := d.rt
	t := spec.tiles(r.sm())
	a := &attnKernel{spec: spec, tiles: t, grid: (spec.SeqLen + t.BM - 1) / t.BM, smem: t.smemBytes(), nt: attnThreads}
	qb, kvb := spec.bytes()
	var err error
	for _, p := range []struct {
		dst *devPtr
		n   int64
	}{{&a.q, qb}, {&a.k, kvb}, {&a.v, kvb}, {&a.o, r4b(qb)}} {
		if *p.dst, err = r.alloc(p.n); err != nil {
			a.free(r)
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		a.bytes += p.n
	}
	return a, nil
}

// buildAttn compiles a's program (NVRTC, per head dim and dtype), loads it
// and allows its dynamic shared memory. On the worker thread.
func (d *Device) buildAttn(a *attnKernel) error {
	r := d.rt
	var err error
	if a.mod, _, err = r.module(a.spec.source(), a.spec.defines()); err != nil {
		return fmt.Errorf("%s: compile: %w", a.spec, err)
	}
	if a.fn, err = r.function(a.mod, a.tiles.kernel()); err == nil && r.setDynSmem != nil {
		err = r.setDynSmem(a.fn, a.smem)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", a.spec, err)
	}
	a.regs, a.local = r.funcAttrs(a.fn)
	return nil
}

// launch enqueues one forward on the current stream.
func (a *attnKernel) launch(r *rt) error {
	s := a.spec
	qmul := float32(math.Log2E / math.Sqrt(float64(s.HeadDim)))
	return r.launch(a.tiles.kernel(), a.fn, [3]int{a.grid, s.Heads, s.Batch}, [3]int{a.nt, 1, 1}, a.smem,
		a.q, a.k, a.v, a.o, i32(s.Heads), i32(s.KVHeads), i32(s.SeqLen), i32(s.KVLen), i32(b2i(s.Causal)), qmul)
}

func (a *attnKernel) free(r *rt) {
	for _, p := range []devPtr{a.q, a.k, a.v, a.o} {
		if p != 0 {
			r.free(p)
		}
	}
	if a.mod != 0 {
		r.drv.moduleUnload(a.mod)
	}
}

// describe is the kernel's build for the timing note: a register spill
// (local bytes > 0) shows here first.
func (a *attnKernel) describe() string {
	t, unit := a.tiles, "CUDA cores"
	if t.MMA {
		unit = "tensor cores, mma.sync m16n8k16, cp.async k/v pipeline, ldmatrix"
		if a.spec.PlainLoads {
			unit = "tensor cores, mma.sync m16n8k16, plain loads"
		}
	}
	return fmt.Sprintf("%s (%s) %dx%d tiles, %d threads, %d B shared, %d regs, %d B local",
		t.kernel(), unit, t.BM, t.BN, a.nt, a.smem, a.regs, a.local)
}

// sm is the compute capability the programs are built for (90 for
// sm_90), from the compiler's target option; 0 where none is named (HIP).
func (r *rt) sm() int {
	for _, o := range r.archOpts {
		var v int
		if _, err := fmt.Sscanf(o, "--gpu-architecture=sm_%d", &v); err == nil {
			return v
		}
	}
	return 0
}

// AttentionCompileReport compiles spec's program with NVRTC alone (no
// driver, no GPU; XBENCH_LIBNVRTC overrides where NVRTC is found) for arch
// ("sm_90") and returns ptxas's per-kernel report: registers, spill stores
// and loads, shared memory. A machine without a GPU catches compile errors
// and spills with it.
func AttentionCompileReport(spec AttentionSpec, arch string) (string, error) {
	if err := spec.check(); err != nil {
		return "", err
	}
	return compileReport(spec.source(), spec.defines(), arch)
}

// compileReport compiles src with NVRTC alone for arch and returns
// ptxas's report (AttentionCompileReport, ScanCompileReport).
func compileReport(src string, defines []string, arch string) (string, error) {
	lib, path, err := specNVRTC.open()
	if err != nil {
		return "", err
	}
	preloadSiblings(path, "libnvrtc-builtins.so*")
	var r rtcAPI
	if err := bind(lib, path, r.table(nvrtcNames)); err != nil {
		return "", err
	}
	opts := append([]string{"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v"}, defines...)
	_, log, err := r.build("nvrtc", src, opts)
	return log, err
}
