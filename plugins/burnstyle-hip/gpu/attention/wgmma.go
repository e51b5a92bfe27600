package attention

// The Hopper kernel (kernels/attention_wgmma.cu): when it runs, its
// geometry, its program and its tensor maps. attention.go's tiles picks it.

import (
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// wgmmaArch is the target the wgmma kernel compiles for: wgmma and
// setmaxnreg exist only on sm_90a, which plain sm_90 code may not use.
const wgmmaArch = "sm_90a"

// wgmma says whether spec runs on xa_attention_wgmma on a device of compute
// capability sm: Hopper (9.0 exactly: its wgmma is not in later
// generations), bfloat16 or float16, head dim 64 or 128 (the tensor maps'
// 64-column halves and the 128-byte swizzle), and no knob that asks for the
// mma.sync kernel.
func (s Spec) wgmma(sm int) bool {
	return sm == 90 && s.Dtype != "float32" && (s.HeadDim == 64 || s.HeadDim == 128) &&
		!s.CUDACores && !s.MMASync && !s.PlainLoads && s.QueryRows == 0 && s.KVRows == 0
}

// deviceTiles is tiles on r's device: the wgmma kernel also needs the
// driver's tensor maps, which the emulator (it reports sm_90 to compile the
// other kernels as the H100 would) and older drivers lack.
func (s Spec) deviceTiles(r *gpu.Runtime) attnTiles {
	if !r.TensorMaps() {
		s.MMASync = true
	}
	return s.tiles(r.SM())
}

// wgmmaTiles is the wgmma kernel's geometry for s: 128 query rows (64 per
// consumer warpgroup) by WGMMAKeyRows keys (0: the default), and a k/v
// ring of WGMMAStages (0: the default) beside the q tile.
//
// The default key tile is 128, except for the overlapped schedule at head
// dim 128: there a consumer thread holds O (64 registers), the scores of
// tile i (BN/2) and P of tile i-1 (BN/4, read by the running P.v) at once,
// 160 at BN = 128, and ptxas (CUDA 13.5) then serializes the products and
// spills (C7512, 232 bytes) whatever setmaxnreg grants: its wgmma pipeline
// fits only in the launch's 168 (65536 / 384). At BN = 96 it is 136 (159
// registers in all, no spill), at 64 112. 96 is the default: a third fewer
// steps than 64 (each pays O's rescale, the barriers and the row
// reductions whatever its width) for about 2% more keys past the causal
// diagonal; TestGPUWGMMA times 64 beside it.
//
// Stages fill sm_90's 227 KB: 3 at BN = 128 (D = 128: 225 KB; on the H100
// at the issue-30 shape 3 ran 0.6-2.4% faster than 2, results/h100-wgmma),
// 4 at 96, 6 at 64: as many bytes in flight.
func (s Spec) wgmmaTiles() attnTiles {
	bn := s.WGMMAKeyRows
	if bn == 0 {
		bn = 128
		if s.WGMMAOverlap && s.HeadDim == 128 {
			bn = 96
		}
	}
	st := s.WGMMAStages
	if st == 0 {
		st = 3 * 128 / bn
	}
	return attnTiles{MMA: true, BM: 128, BN: bn, DP: s.HeadDim, Stages: st}
}

// wgmmaThreads is XW_NT: the producer warpgroup and two consumers.
const wgmmaThreads = 384

// wgmmaSmem mirrors XW_SMEM_BYTES: 1024 bytes to align the base, q, the k
// and v stages, and 1 + 3 * stages mbarriers of 8 bytes.
func wgmmaSmem(t attnTiles) int {
	return 1024 + t.BM*t.DP*2 + 2*t.Stages*t.BN*t.DP*2 + 8*(1+3*t.Stages)
}

// wgmmaDefines are the wgmma program's options: its target and sizes.
func (s Spec) wgmmaDefines(t attnTiles) []string {
	xa, _, _, _ := attnDtypeCode(s.Dtype)
	// XW_ST also leaves attention.cu's own kernel out of this program.
	defs := []string{"--gpu-architecture=" + wgmmaArch, "-DXB_BF16=0", fmt.Sprintf("-DXA_DT=%d", xa),
		fmt.Sprintf("-DXA_D=%d", s.HeadDim), fmt.Sprintf("-DXW_ST=%d", t.Stages), fmt.Sprintf("-DXW_BN=%d", t.BN),
		fmt.Sprintf("-DXW_DEBUG=%d", s.WGMMADebug), fmt.Sprintf("-DXW_VSWAP=%d", b2i(s.WGMMAVSwap)),
		fmt.Sprintf("-DXW_PINGPONG=%d", b2i(s.WGMMAPingPong)), fmt.Sprintf("-DXW_OVERLAP=%d", b2i(s.WGMMAOverlap))}
	if s.lse { // only then: the forward alone keeps its program as it was
		defs = append(defs, "-DXW_LSE=1")
	}
	return defs
}

// program is the source and compiler options of the program holding t's
// kernel.
func (s Spec) program(t attnTiles) (string, []string) {
	if t.Stages > 0 {
		return wgmmaSource(), s.wgmmaDefines(t)
	}
	return s.source(), s.defines()
}

// wgmmaSource is the wgmma program: attention.cu for the dtype helpers,
// then the kernel.
func wgmmaSource() string {
	return gpu.Program(kernelFS, "attention.cu", "attention_wgmma.cuh", "attention_wgmma_ops.cuh", "attention_wgmma_steps.cuh",
		"attention_wgmma.cu")
}

// tiledMaps are the TMA boxes of q (3-d: head dim, rows, batch*heads; also
// dout's in the backward) and of k and v (head dim, keys, batch*kv heads):
// 64 columns (the 128-byte swizzle span) by bm rows for q and bn keys for k
// and v, so a tile wider than 64 columns is two copies. Rows past a head's
// end read as zeros: the kernels mask those keys and skip those rows. The
// forward (BM 128, BN its key tile) and the backward (BM 64, BN 128) share it.
func (s Spec) tiledMaps(bm, bn int) (q, kv gpu.TiledMap) {
	d := uint64(s.HeadDim)
	q = gpu.TiledMap{Dims: []uint64{d, uint64(s.SeqLen), uint64(s.Batch * s.Heads)},
		Box: []uint32{64, uint32(bm), 1}, Swizzle: gpu.TmapSwizzle128B}
	kv = gpu.TiledMap{Dims: []uint64{d, uint64(s.KVLen), uint64(s.Batch * s.KVHeads)},
		Box: []uint32{64, uint32(bn), 1}, Swizzle: gpu.TmapSwizzle128B}
	return q, kv
}

// encodeMaps makes a's three tensor maps (after allocation, before launch).
func (a *attnKernel) encodeMaps(r *gpu.Runtime) error {
	qm, kvm := a.spec.tiledMaps(a.tiles.BM, a.tiles.BN)
	for _, m := range []struct {
		dst **gpu.TensorMap
		p   gpu.Ptr
		m   gpu.TiledMap
	}{{&a.tq, a.q, qm}, {&a.tk, a.k, kvm}, {&a.tv, a.v, kvm}} {
		var err error
		if *m.dst, err = r.EncodeTiled(m.p, m.m); err != nil {
			return fmt.Errorf("%s: %w", a.spec, err)
		}
	}
	return nil
}

// archSM reads the compute capability from a compiler target such as
// "sm_90" or "sm_90a" and whether it names the arch-specific ("a") set.
func archSM(arch string) (sm int, specific bool) {
	var n int
	var rest string
	if k, _ := fmt.Sscanf(arch, "sm_%d%s", &n, &rest); k >= 1 {
		return n, rest == "a"
	}
	return 0, false
}
