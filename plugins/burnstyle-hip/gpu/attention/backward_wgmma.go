package attention

// The Hopper backward (kernels/attention_bwd_wgmma.cu): when it runs, its
// geometry, its program and its tensor maps. backward.go's gradTiles picks
// it; the preprocess and the dq rounding stay those of attention_bwd.cu
// (in the forward's program, or gradAuxProgram's beside the wgmma
// forward, which saves the rows' lse when built with XW_LSE).

import (
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// defaultGradStages is the wgmma backward's q/dout ring depth when
// GradStages is 0: 2 (3 ran 3% slower on the H100 in the first build, and
// beside the bulk dq tiles 3 stages do not fit in 227 KB at head dim 128).
//
// Its times on the H100 beside the mma.sync backward and sdpa-flash:
// results/h100-attn-bwd/README.md. Tried and dropped (slower,
// docs/results/tuning.md#native-attention-backward): walking the query
// tiles downward with the group's heads interleaved, so a kv head's
// concurrent blocks share each q, dout tile and dq row in L2 (their
// reductions collide),
// and issuing dq before dv, dk so its epilogue overlaps them (no gain);
// issuing the next tile's S^T, dP^T before dq's epilogue does not fit the
// registers at head dim 128 (ptxas serializes the products).
const defaultGradStages = 2

// gradWGMMA says whether spec's backward runs on xa_attention_bwd_wgmma on a
// device of compute capability sm: the forward wgmma kernel's conditions
// (Hopper exactly, bfloat16 or float16, head dim 64 or 128, no knob asking
// for another kernel), and none of the mma.sync backward's knobs set
// (GradMMASync, GradKeys, GradOff: those time that kernel).
func (s Spec) gradWGMMA(sm int) bool {
	return sm == 90 && s.Dtype != "float32" && (s.HeadDim == 64 || s.HeadDim == 128) && !s.CUDACores && !s.PlainLoads &&
		!s.GradMMASync && s.GradKeys == 0 && s.GradOff == 0
}

// gradWGMMATiles: 64 query rows by 128 keys (64 per consumer warpgroup),
// a ring of GradStages q/dout tiles.
func (s Spec) gradWGMMATiles() gradTiles {
	st := s.GradStages
	if st == 0 {
		st = defaultGradStages
	}
	return gradTiles{WGMMA: true, BM: 64, BN: 128, DP: s.HeadDim, Stages: st, Off: s.GradWGMMAOff}
}

// gradWGMMASmem mirrors XV_SMEM_BYTES: 1024 to align the base, k and v,
// the q/dout ring, two dS buffers, two slots of lse and D, 1 + stages
// mbarriers (16-byte aligned after them), and the two warpgroups' dq tiles
// of 64 rows of 288 bytes (unless GradWGMMAOff bit 4 adds dq by
// red.global). Head dim 128: 202784 bytes at 2 stages.
func gradWGMMASmem(t gradTiles) int {
	n := 1024 + 2*t.BN*t.DP*2 + 2*t.Stages*t.BM*t.DP*2 + 2*t.BM*t.BN*2 + 16*t.BM + (8*(1+t.Stages)+15)/16*16
	if t.Off&4 == 0 {
		n += 2 * t.BM * 288
	}
	return n
}

// gradWGMMAProgram is the wgmma backward's program: attention.cu for the
// dtype helpers (XW_ST leaves its kernels out), the forward's wgmma
// helpers, then the kernel, for sm_90a.
func (s Spec) gradWGMMAProgram(t gradTiles) (string, []string) {
	xa, _, _, _ := attnDtypeCode(s.Dtype)
	src := gpu.Program(kernelFS, "attention.cu", "attention_wgmma.cuh", "attention_wgmma_ops.cuh", "attention_wgmma_steps.cuh",
		"attention_bwd_wgmma.cu")
	return src, []string{"--gpu-architecture=" + wgmmaArch, "-DXB_BF16=0", fmt.Sprintf("-DXA_DT=%d", xa),
		fmt.Sprintf("-DXA_D=%d", s.HeadDim), fmt.Sprintf("-DXW_ST=%d", t.Stages), fmt.Sprintf("-DXV_OFF=%d", t.Off)}
}

// buildGradWGMMA compiles and loads the wgmma backward's program, looks its
// kernel up and encodes its four tensor maps. On the worker thread.
func buildGradWGMMA(d *gpu.Device, g *gradKernel) (uintptr, error) {
	r, s := d.RT, g.fwd.spec
	qm, kvm := s.tiledMaps(g.tiles.BM, g.tiles.BN)
	for _, m := range []struct {
		dst **gpu.TensorMap
		p   gpu.Ptr
		m   gpu.TiledMap
	}{{&g.tq, g.fwd.q, qm}, {&g.tk, g.fwd.k, kvm}, {&g.tv, g.fwd.v, kvm}, {&g.tg, g.dout, qm}} {
		var err error
		if *m.dst, err = r.EncodeTiled(m.p, m.m); err != nil {
			return 0, fmt.Errorf("%s backward: %w", s, err)
		}
	}
	var err error
	if g.bmod, _, err = r.Module(s.gradWGMMAProgram(g.tiles)); err != nil {
		return 0, fmt.Errorf("%s backward: compile: %w", s, err)
	}
	fn, err := r.Function(g.bmod, g.tiles.kernel())
	if err != nil {
		return 0, fmt.Errorf("%s backward: %w", s, err)
	}
	return fn, nil
}

// GradCompileReport compiles spec's wgmma backward program with NVRTC alone
// for sm_90a (no GPU; XBENCH_LIBNVRTC names NVRTC) and returns ptxas's
// report, as CompileReport does the forward's.
func GradCompileReport(spec Spec) (string, error) {
	if err := spec.check(); err != nil {
		return "", err
	}
	if !spec.gradWGMMA(90) {
		return "", fmt.Errorf("%s: the wgmma backward does not run this spec", spec)
	}
	src, defines := spec.gradWGMMAProgram(spec.gradWGMMATiles())
	return gpu.NVRTCReport(src, defines, wgmmaArch)
}

// GradForwardCompileReport compiles, with NVRTC alone for sm_90a, the
// forward the backward phases run on an H100 for spec (the wgmma kernel
// built with XW_LSE where it runs, else the mma.sync program) and the
// program of the backward's pre and dq kernels beside it, and returns
// ptxas's reports of both.
func GradForwardCompileReport(spec Spec) (string, error) {
	if err := spec.check(); err != nil {
		return "", err
	}
	g := gradSpec(spec)
	ft := g.tiles(90)
	src, defines := g.program(ft)
	log, err := gpu.NVRTCReport(src, defines, wgmmaArch)
	if err != nil || ft.Stages == 0 {
		return log, err
	}
	gt := gradTiles{WGMMA: g.gradWGMMA(90), MMA: !g.gradWGMMA(90)}
	src, defines = g.gradAuxProgram(gt)
	aux, err := gpu.NVRTCReport(src, defines, "sm_90")
	return log + aux, err
}
