package attention

// The attention backward phases on CUDA (kernels/attention_bwd.cu): one
// forward that saves each row's log-sum-exp (the kernel the forward alone
// would run: wgmma built with XW_LSE on sm_90 where it runs, mma.sync for
// bfloat16 and float16 from sm_80, the CUDA-core kernel else), then three
// kernels: D = rowsum(dout * out) (which also zeroes the float32 dq
// accumulator), the main kernel (dk, dv, and dq by float32 atomics), and
// dq rounded to the dtype. backward times those three after a forward made
// before timing; both times the four.

import (
	"fmt"
	"math"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// gradTiles is the backward kernel's geometry: BM query rows and BN keys
// per tile, the head dim padded to DP. MMA is xa_attention_bwd_mma
// (attention_bwd_mma.cu: 64 query rows by 64 or 128 keys, 8 warps, DP a
// multiple of 32), else
// xa_attention_bwd on CUDA cores, whose every entry keeps 64 dk and dv
// accumulators a thread (BN * DP * 2 / 128) and shared memory within
// attnMaxSmem.
type gradTiles struct {
	MMA        bool
	WGMMA      bool // xa_attention_bwd_wgmma (backward_wgmma.go), Stages its ring
	BM, BN, DP int
	Stages     int
	Off        int // the changes turned off: Spec.GradOff (XG_OFF), or GradWGMMAOff (XV_OFF) for WGMMA
}

// gradTiles picks the backward kernel for a device of compute capability
// sm: tensor cores under the forward's conditions (a 16-bit dtype, sm_80,
// not CUDACores; PlainLoads too, since the kernel needs ldmatrix) up to
// head dim 128, where its dk and dv accumulators stop fitting in
// registers, on a device that gives a block its shared memory (two stages
// of q and dout: 121 KB at 128 with 64 keys, 130 with GradOff bit 4, which
// sm_80 and sm_90 give and sm_86 and sm_89 not; 171 KB with 128 keys, 190
// with bit 4, sm_90 only, else 64 keys run); CUDA cores else.
func (s Spec) gradTiles(r *gpu.Runtime) gradTiles {
	if s.gradWGMMA(r.SM()) && r.TensorMaps() {
		return s.gradWGMMATiles()
	}
	if s.Dtype != "float32" && !s.CUDACores && !s.PlainLoads && r.SM() >= 80 && s.HeadDim <= 128 {
		for _, keys := range []int{s.gradKeys(), 64} {
			if m := (gradTiles{MMA: true, BM: 64, BN: keys, DP: mmaGradDP(s.HeadDim), Off: s.GradOff}); m.smemBytes() <= r.MaxDynSmem {
				return m
			}
		}
	}
	return gradTilesFor(s.HeadDim)
}

// defaultGradKeys is the tensor-core backward's key tile when GradKeys is
// 0: 128 (FlashAttention-2's tile at head dim 128), where a block gets its
// 171 KB (else 64, above): the faster of the two on the H100
// (docs/results/tuning.md#native-attention-tiles).
const defaultGradKeys = 128

func (s Spec) gradKeys() int {
	if s.GradKeys != 0 {
		return s.GradKeys
	}
	return defaultGradKeys
}

// mmaGradDP is XG_DP: the head dim padded so each half is whole pairs of
// 8-column tiles.
func mmaGradDP(d int) int { return (d + 31) / 32 * 32 }

func (t gradTiles) kernel() string {
	if t.WGMMA {
		return "xa_attention_bwd_wgmma"
	}
	if t.MMA {
		return "xa_attention_bwd_mma"
	}
	return "xa_attention_bwd"
}

func (t gradTiles) threads() int {
	if t.MMA || t.WGMMA {
		return 256
	}
	return 128
}

func gradTilesFor(d int) gradTiles {
	dp := (d + 7) / 8 * 8
	switch {
	case dp <= 64:
		return gradTiles{BM: 64, BN: 64, DP: dp}
	case dp <= 128:
		return gradTiles{BM: 32, BN: 32, DP: dp}
	}
	return gradTiles{BM: 16, BN: 16, DP: dp}
}

// smemBytes mirrors XG_MSMEM_BYTES in attention_bwd_mma.cu and
// XG_SMEM_FLOATS in attention_bwd.cu.
func (t gradTiles) smemBytes() int {
	if t.WGMMA {
		return gradWGMMASmem(t)
	}
	if t.MMA { // XG_MSMEM_BYTES
		ss := t.DP + 8
		if t.Off&4 == 0 { // p and ds, [row][key] each
			return 2*(2*t.BN*ss+4*t.BM*ss+2*t.BM*(t.BN+8)) + 16*t.BM
		}
		return 2*(2*t.BN*ss+4*t.BM*ss+2*t.BN*(t.BM+8)+t.BM*(t.BN+8)) + 16*t.BM
	}
	qs := t.DP + 1
	return 4 * (2*t.BN*qs + 2*t.BM*qs + 2*t.BM*(t.BN+1) + 2*t.BM)
}

// gradKernel is a forward that saves its row statistics plus the backward's
// kernels and buffers.
type gradKernel struct {
	fwd                  *attnKernel
	pre, bwd, cvt        uintptr
	bmod                 uintptr        // the wgmma backward's own program, else 0
	amod                 uintptr        // the program of pre, cvt (and an mma.sync or CUDA-core bwd) when the forward's (wgmma) lacks them, else 0
	tq, tk, tv, tg       *gpu.TensorMap // its maps of q, k, v, dout
	dout, dd, dq32       gpu.Ptr
	dq, dk, dv           gpu.Ptr
	tiles                gradTiles
	regs, local, preRegs int
}

// gradSpec is the spec the backward phases run: the forward that saves
// the log-sum-exp. The mma.sync and CUDA-core kernels save it whenever
// given the buffer; the wgmma kernel only when built with XW_LSE (lse).
// MMASync (the mma-sync variant) keeps the mma.sync forward here too.
//
// On the H100 the mma.sync forward took a large part of "both" beside
// what the wgmma forward alone takes (results/h100-attn-bwd/README.md).
func gradSpec(spec Spec) Spec {
	spec.lse = true
	return spec
}

// gradAuxProgram is the program holding the backward's other kernels when
// the forward's is the wgmma one (sm_90a, which holds none of them): with
// the wgmma backward only pre and dq, so attention.cu and attention_bwd.cu
// (a fraction of the whole program's NVRTC time); else the whole mma.sync
// program, whose backward kernel runs.
func (s Spec) gradAuxProgram(t gradTiles) (string, []string) {
	if t.WGMMA {
		return gpu.Program(kernelFS, "attention.cu", "attention_bwd.cu"), s.defines()
	}
	return s.source(), s.defines()
}

// allocGrad allocates the forward's buffers and lse, dout, D, the float32
// dq accumulator and dq, dk, dv. On the worker thread; free releases all.
func allocGrad(d *gpu.Device, spec Spec) (*gradKernel, error) {
	r := d.RT
	t := spec.gradTiles(r)
	if t.MMA {
		spec.GradKeys = t.BN // the program's XG_BK: what the device fits
	}
	fwd, err := allocAttn(d, gradSpec(spec))
	if err != nil {
		return nil, err
	}
	g := &gradKernel{fwd: fwd, tiles: t}
	qb, kvb := spec.bytes()
	rows := int64(spec.Batch) * int64(spec.Heads) * int64(spec.SeqLen)
	for _, p := range []struct {
		dst *gpu.Ptr
		n   int64
	}{{&fwd.lse, 4 * rows}, {&g.dout, qb}, {&g.dd, 4 * rows}, {&g.dq32, 4 * int64(spec.QLen())},
		{&g.dq, r4b(qb)}, {&g.dk, r4b(kvb)}, {&g.dv, r4b(kvb)}} {
		if *p.dst, err = r.Alloc(p.n); err != nil {
			g.free(r)
			return nil, fmt.Errorf("%s backward: %w", spec, err)
		}
		fwd.bytes += p.n
	}
	return g, nil
}

// buildGrad compiles the program (the forward and backward kernels are one
// NVRTC program) and looks the backward's kernels up.
func buildGrad(d *gpu.Device, g *gradKernel) error {
	r := d.RT
	if err := buildAttn(d, g.fwd); err != nil {
		return err
	}
	var err error
	mod := g.fwd.mod
	if g.fwd.tiles.Stages > 0 { // the wgmma forward's program holds no backward kernel
		if g.amod, _, err = r.Module(g.fwd.spec.gradAuxProgram(g.tiles)); err != nil {
			return fmt.Errorf("%s backward: compile: %w", g.fwd.spec, err)
		}
		mod = g.amod
	}
	fns := []struct {
		fn   *uintptr
		name string
	}{{&g.pre, "xa_attention_bwd_pre"}, {&g.bwd, g.tiles.kernel()}, {&g.cvt, "xa_attention_bwd_dq"}}
	if g.tiles.WGMMA {
		if g.bwd, err = buildGradWGMMA(d, g); err != nil {
			return err
		}
		fns = append(fns[:1], fns[2])
	}
	for _, k := range fns {
		if *k.fn, err = r.Function(mod, k.name); err != nil {
			return fmt.Errorf("%s backward: %w", g.fwd.spec, err)
		}
	}
	if r.SetDynSmem != nil {
		if err := r.SetDynSmem(g.bwd, g.tiles.smemBytes()); err != nil {
			return fmt.Errorf("%s backward: %w", g.fwd.spec, err)
		}
	}
	g.regs, g.local = r.FuncAttrs(g.bwd)
	g.preRegs, _ = r.FuncAttrs(g.pre)
	return nil
}

// launchBackward enqueues the three backward kernels on the current stream.
func (g *gradKernel) launchBackward(r *gpu.Runtime) error {
	for _, launch := range g.parts() {
		if err := launch.fn(r); err != nil {
			return err
		}
	}
	return nil
}

// gradPart is one backward kernel's launch, named for TimeGradParts.
type gradPart struct {
	name string
	fn   func(r *gpu.Runtime) error
}

// parts are the backward's kernels in order: D = rowsum(dout * out) (and
// dq32 zeroed), the main kernel, dq rounded to the dtype.
func (g *gradKernel) parts() [3]gradPart {
	s, t := g.fwd.spec, g.tiles
	rows := s.Batch * s.Heads * s.SeqLen
	qmul := float32(math.Log2E / math.Sqrt(float64(s.HeadDim)))
	scale := float32(1 / math.Sqrt(float64(s.HeadDim)))
	n := int64(s.QLen())
	return [3]gradPart{
		{"xa_attention_bwd_pre", func(r *gpu.Runtime) error {
			return r.Launch("xa_attention_bwd_pre", g.pre, [3]int{(rows + 3) / 4, 1, 1}, [3]int{128, 1, 1}, 0,
				g.fwd.o, g.dout, g.dd, g.dq32, gpu.I32(rows))
		}},
		{t.kernel(), func(r *gpu.Runtime) error {
			if t.WGMMA {
				return r.Launch(t.kernel(), g.bwd, [3]int{(s.KVLen + t.BN - 1) / t.BN, s.KVHeads, s.Batch}, [3]int{t.threads(), 1, 1},
					t.smemBytes(), g.tq, g.tk, g.tv, g.tg, g.fwd.lse, g.dd, g.dq32, g.dk, g.dv,
					gpu.I32(s.Heads), gpu.I32(s.KVHeads), gpu.I32(s.SeqLen), gpu.I32(s.KVLen), gpu.I32(b2i(s.Causal)), qmul, scale)
			}
			return r.Launch(t.kernel(), g.bwd, [3]int{(s.KVLen + t.BN - 1) / t.BN, s.KVHeads, s.Batch}, [3]int{t.threads(), 1, 1},
				t.smemBytes(), g.fwd.q, g.fwd.k, g.fwd.v, g.dout, g.fwd.lse, g.dd, g.dq32, g.dk, g.dv,
				gpu.I32(s.Heads), gpu.I32(s.KVHeads), gpu.I32(s.SeqLen), gpu.I32(s.KVLen), gpu.I32(b2i(s.Causal)), qmul, scale)
		}},
		{"xa_attention_bwd_dq", func(r *gpu.Runtime) error {
			return r.Launch("xa_attention_bwd_dq", g.cvt, [3]int{int(min((n+127)/128, 8192)), 1, 1}, [3]int{128, 1, 1}, 0,
				g.dq32, g.dq, gpu.I64(n))
		}},
	}
}

func (g *gradKernel) free(r *gpu.Runtime) {
	for _, p := range []gpu.Ptr{g.dout, g.dd, g.dq32, g.dq, g.dk, g.dv} {
		if p != 0 {
			r.Free(p)
		}
	}
	for _, m := range []uintptr{g.bmod, g.amod} {
		if m != 0 {
			r.Drv.ModuleUnload(m)
		}
	}
	g.fwd.free(r)
}

// describe names both halves for env.settings: the forward that saved the
// state, then the backward's build (a spill shows in its local bytes).
func (g *gradKernel) describe() string {
	t, unit := g.tiles, "CUDA cores, float32 math"
	switch {
	case t.WGMMA:
		unit = fmt.Sprintf("tensor cores, wgmma m64nNk16 sm_90a, TMA q/dout ring of %d stages, 2 warpgroups", t.Stages)
	case t.MMA:
		unit = "tensor cores, mma.sync m16n8k16, ldmatrix"
	}
	off := ""
	if (t.MMA || t.WGMMA) && t.Off != 0 {
		off = fmt.Sprintf(", changes %d off", t.Off)
	}
	dq := "dq by float32 atomics"
	if t.WGMMA && t.Off&4 == 0 {
		dq = "dq by float32 bulk reductions"
	}
	return fmt.Sprintf("forward %s; backward %s (FlashAttention-2, %s, %s) %dx%d tiles%s, %d threads, %d B shared, %d regs, %d B local",
		g.fwd.describe(), t.kernel(), unit, dq, t.BM, t.BN, off, t.threads(), t.smemBytes(), g.regs, g.local)
}

// checkGrad is check plus the backward kernel's shared memory on d.
func checkGrad(d *gpu.Device, spec Spec) error {
	if err := Supports(d, gradSpec(spec)); err != nil {
		return err
	}
	if need := spec.gradTiles(d.RT).smemBytes(); need > d.RT.MaxDynSmem {
		return fmt.Errorf("%s backward: needs %d bytes of shared memory per block, %s allows %d", spec, need, d.Info().Name, d.RT.MaxDynSmem)
	}
	return nil
}
