// Package attention runs the attention workload (docs/workloads/attention.md)
// on CUDA, with our own kernels (kernels/attention.cu, attention_mma.cu;
// the backward phases in backward.go, kernels/attention_bwd.cu and
// attention_bwd_mma.cu), compiled by NVRTC per head dim and dtype.
//
// Algorithm: FlashAttention-2's forward (Dao 2023). One block of 128
// threads per (query tile, batch*head) loads its q tile once; k/v tiles
// stream through shared memory while an online softmax keeps each row's
// running max and sum in float32 (exp2 on scores scaled by log2(e)/sqrt(D))
// and the unnormalised output in registers, divided by the sum once at the
// end. kv tiles wholly above the bottom-right causal diagonal are never
// loaded, query tiles with the most keys start first, tails of seq_len,
// kv_len and the head dim are masked or zero-padded, and GQA maps query
// head h to kv head h/(H/KH) by index. Two kernels: bfloat16 and float16
// run on tensor cores (xa_attention_mma: mma.sync m16n8k16 for q.k^T and
// p.v, float32 accumulators, p rounded to the dtype in registers, tiles
// in the dtype: 128 query x 64 kv rows up to D = 64, 128x32 up to 128
// (each warp two m-tiles of 16 rows), 64x32 above; 52 KB of shared memory
// at D = 128, 66 KB at 256; v of a tile loads by cp.async
// while q.k^T runs, k of the next while p.v runs, as in FA2; fragments by
// ldmatrix) on sm_80 and newer; float32
// (IEEE, never TF32) and, with CUDACores, the 16-bit types run on CUDA
// cores (xa_attention_fwd, float32 tiles: 64x64 up to D = 64, 64x32 up to
// 128, 32x16 up to 256; at most 74 KB). Both stay within 99 KB. Verified
// on the CPU emulator only (g++ for NVRTC, blocks as fibers, mma.sync by a
// stand-in that follows the PTX ISA's fragment layout; odd shapes, GQA,
// causal, rows with no key, every dtype and tile size, see
// attention_test.go), and compiled by the real NVRTC for sm_90 without
// spills (TestAttentionNVRTC): nothing has been run or timed on a real GPU
// yet; TestGPUAttention is the first check to run there.
//
// On sm_90 (Hopper) with the driver's tensor maps, bfloat16 and float16 at
// head dim 64 or 128 run a third kernel, xa_attention_wgmma (wgmma.go,
// kernels/attention_wgmma.cu; FlashAttention-3's design): tensor-map bulk
// copies (TMA) of q, k, v through an mbarrier ring, one producer and two
// consumer warpgroups, both products as wgmma, compiled for sm_90a; each
// consumer runs a tile's q.k^T, softmax and P.v one after another (the two
// consumers overlap each other), or with WGMMAOverlap overlaps a tile's
// softmax with the previous tile's P.v (FA3's intra-warpgroup pipelining;
// 96-key tiles at head dim 128, see wgmmaTiles), which measured slower on
// the H100 (results/h100-wgmma). It has
// no emulator stand-in: NVRTC compiles it here (TestWGMMANVRTC),
// TestGPUWGMMADebug and TestGPUWGMMA check it on an H100
// (scripts/h100-wgmma.sh). The mma-sync variant keeps mma.sync there, the
// wgmma-overlap variant runs the overlapped schedule. The backward phases'
// forward (backward.go's gradSpec) runs the same kernel built with XW_LSE,
// which also writes each row's log-sum-exp for the backward; the forward
// alone is built without it.
package attention

import (
	"fmt"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// AttentionSpec is one attention forward configuration, kv_heads and kv_len
// resolved (never the workload's 0).
type Spec struct {
	cpu.AttentionShape
	Dtype string // float32, bfloat16, float16
	// CUDACores runs bfloat16 and float16 on the CUDA-core kernel instead
	// of tensor cores: a baseline, and what runs below sm_80 anyway.
	CUDACores bool
	// PlainLoads has the tensor-core kernel load tiles with plain loads and
	// its fragments with scalar shared-memory loads, instead of the cp.async
	// pipeline and ldmatrix: the fallback should either misbehave on a GPU
	// (on the emulator only the ldmatrix part differs: it copies
	// synchronously either way).
	PlainLoads bool
	// QueryRows is the tensor-core kernel's query tile up to D = 128: 64
	// or 128 rows, 0 for the default (defaultQueryRows). A knob for the
	// GPU test, which times both.
	QueryRows int
	// KVRows is its kv tile up to D = 128: 32 or 64, 0 for the default.
	KVRows int
	// GradKeys is the tensor-core backward's key tile (backward.go): 64
	// or 128 keys, 0 for the default (defaultGradKeys).
	GradKeys int
	// GradOff turns changes of the tensor-core backward off (bits of
	// XG_OFF in attention_bwd_mma.cu: 1 the heaviest-first block order, 2
	// masking only where a tile needs it, 4 p and ds stored once as
	// [row][key] words, 8 the warps' 2 x 4 split of s, dp and 4 x 2 of dk,
	// dv, 16 their 2 x 4 split of dq): 0 runs them all; TestGPUAttentionGrad times the older builds
	// beside the default.
	GradOff int
	// MMASync keeps the mma.sync kernel on sm_90, where the wgmma kernel
	// (wgmma.go) would run: the baseline beside it.
	MMASync bool
	// GradMMASync keeps the mma.sync backward on sm_90, where the wgmma
	// backward (backward_wgmma.go) would run: the baseline beside it. A
	// GradKeys or GradOff other than 0 (knobs of the mma.sync backward)
	// asks for it too.
	GradMMASync bool
	// GradStages is the wgmma backward's q/dout ring depth: 2 to 4, 0 for
	// the default (defaultGradStages).
	GradStages int
	// GradWGMMAOff turns changes of the wgmma backward off (bits of XV_OFF
	// in attention_bwd_wgmma.cu: 1 issues dv and dk after the warpgroups'
	// barrier instead of before it, 2 stores dS by 16-bit stores instead
	// of stmatrix, 4 adds dq by red.global instead of bulk reductions from
	// shared memory): 0 runs them all; the GPU test times the first build
	// (7) beside the default.
	GradWGMMAOff int
	// WGMMADebug (1 or 2) and WGMMAVSwap compile the wgmma kernel's debug
	// modes (attention_wgmma.cu): for TestGPUWGMMADebug only.
	WGMMADebug int
	WGMMAVSwap bool
	// WGMMAPingPong makes the wgmma kernel's consumers take turns on the
	// tensor cores (XW_PINGPONG): checked and timed beside the default by
	// TestGPUWGMMA.
	WGMMAPingPong bool
	// WGMMAStages sets the wgmma kernel's k/v ring depth (0: the default,
	// wgmmaTiles's): TestGPUWGMMA checks and times another depth beside it.
	WGMMAStages int
	// WGMMAOverlap runs the wgmma kernel's consumers in the overlapped
	// schedule (XW_OVERLAP 1: tile i's softmax while P.v of tile i-1 runs)
	// instead of the serial one (per tile q.k^T, softmax, P.v, each
	// waiting for the last). On the H100 at the issue-30 shape the serial
	// schedule, whose two consumers already overlap each other, ran 1.059
	// ms against 1.193 (results/h100-wgmma), so serial is the default and
	// the overlap the wgmma-overlap variant.
	WGMMAOverlap bool
	// WGMMAKeyRows is the wgmma kernel's k/v tile: 64 or 128 keys, 0 for
	// the default (wgmmaTiles).
	WGMMAKeyRows int

	// lse is set by gradSpec (backward.go) for the backward phases'
	// forward: the wgmma kernel is then built with XW_LSE (it writes the
	// rows' log-sum-exp); the forward alone keeps the build without it.
	lse bool
}

// Timing is what Time measured.
type Timing struct {
	// CompileMs is the first call alone by the host clock: NVRTC, module
	// load and one run.
	CompileMs float64
	// SamplesMs holds one device-event time per repeat around one launch.
	SamplesMs []float64
	// PeakMemoryBytes counts q, k, v and out.
	PeakMemoryBytes int64
	Device          result.Device
	// Timing says how SamplesMs was measured, for the result's notes.
	Timing string
	// Kernel is the kernel that ran and its build (tiles, threads,
	// registers, spills): the result's env.settings.attention_kernel.
	Kernel string
}

// attnTiles is one kernel's geometry for one head dim: query rows BM and
// kv rows BN per tile, head dim padded to DP.
type attnTiles struct {
	MMA        bool // xa_attention_mma (tensor cores), else xa_attention_fwd
	BM, BN, DP int
	// Stages > 0 is xa_attention_wgmma (sm_90a) with that many k/v stages.
	Stages int
}

const attnThreads = 128 // XA_NT

// attnTilesFor picks the tiles: the widest that keep shared memory under
// attnMaxSmem (larger D leaves room for fewer rows).
func attnTilesFor(d int) attnTiles {
	dp := (d + 7) / 8 * 8
	switch {
	case dp <= 64:
		return attnTiles{false, 64, 64, dp, 0}
	case dp <= 128:
		return attnTiles{false, 64, 32, dp, 0}
	}
	return attnTiles{false, 32, 16, dp, 0}
}

// mmaTilesFor is the tensor-core kernel's geometry for head dim d and a
// query tile of rows (0: the default): 4 warps of 16 (64 rows) or of 32
// (128 rows: each warp's k and v fragments then feed two m-tiles, FA2's
// arrangement, halving the shared-memory reads per product); the head dim
// padded to the k step of 16; 64 kv rows. Past D = 128 the output
// accumulators alone take 128 registers a thread per m-tile, so the tile
// is 64x32 there whatever rows asks. Tiles are 16-bit: 128x64 at D = 128
// needs 70 KB, 64x32 at D = 256 66 KB.
func mmaTilesFor(d, rows, kvRows int) attnTiles {
	dp := (d + 15) / 16 * 16
	if dp > 128 {
		return attnTiles{true, 64, 32, dp, 0}
	}
	if rows == 0 {
		rows = defaultQueryRows
	}
	if kvRows == 0 {
		// 128x64 at D = 128 wants more than 255 registers, and ptxas spills
		// about 100 bytes a thread (128x32 takes 240, no spill), yet on the
		// H100 it ran faster (half the barriers and pipeline stages per key;
		// docs/results/tuning.md#native-attention-tiles).
		kvRows = 64
	}
	return attnTiles{true, rows, kvRows, dp, 0}
}

// defaultQueryRows is the tensor-core query tile up to D = 128.
const defaultQueryRows = 128

// minBlocks is the tensor-core kernel's __launch_bounds__ minimum (see
// attention_mma.cu): 3 blocks per SM for 64-row tiles up to D = 128, 2 for
// 128-row tiles (twice the accumulators: up to 255 registers), else 1.
func (t attnTiles) minBlocks() int {
	switch {
	case t.DP > 128:
		return 1
	case t.BM > 64:
		return 2
	}
	return 3
}

// tiles picks the kernel for a device of compute capability sm (e.g. 90):
// tensor cores for bfloat16 and float16 from sm_80 (mma.sync with bf16
// needs it) unless CUDACores asks otherwise; float32 always on CUDA cores
// (the spec's float32 is IEEE, never TF32).
func (s Spec) tiles(sm int) attnTiles {
	if s.wgmma(sm) {
		return s.wgmmaTiles()
	}
	if s.Dtype != "float32" && !s.CUDACores && sm >= 80 {
		return mmaTilesFor(s.HeadDim, s.QueryRows, s.KVRows)
	}
	return attnTilesFor(s.HeadDim)
}

func (t attnTiles) kernel() string {
	switch {
	case t.Stages > 0:
		return "xa_attention_wgmma"
	case t.MMA:
		return "xa_attention_mma"
	}
	return "xa_attention_fwd"
}

// attnMaxSmem is the shared memory the kernel may ask for: 99 KB, the
// per-block opt-in limit of sm_86/sm_89 (sm_80 allows 163 KB, sm_90 227 KB),
// so one tile table fits every current NVIDIA GPU.
const attnMaxSmem = 99 << 10

// smemBytes mirrors XA_SMEM_FLOATS in attention.cu and XM_SMEM_BYTES in
// attention_mma.cu; the emulator fails a launch that gives less than the
// kernel computes.
func (t attnTiles) smemBytes() int {
	if t.Stages > 0 {
		return wgmmaSmem(t)
	}
	if t.MMA {
		return 2 * (t.BM + 2*t.BN) * (t.DP + 8)
	}
	qs := t.DP + 1
	return 4 * (t.BM*qs + t.BN*qs + t.BN*t.DP + t.BM*(t.BN+1))
}

// attnDtypeCode is XA_DT and the cudaDataType encodeGEMM/decodeGEMM take.
func attnDtypeCode(dtype string) (xa int, dt int32, bytes int, err error) {
	d, ok := gpu.DtypeOf(dtype)
	if !ok || d.Kernel < 0 {
		return 0, 0, 0, fmt.Errorf("attention: unknown dtype %q (want float32, bfloat16 or float16)", dtype)
	}
	return d.Kernel, d.Cuda, d.Bytes, nil
}

func (s Spec) String() string {
	out := "attention " + s.AttentionShape.String() + " dtype=" + s.Dtype
	if s.QueryRows != 0 || s.KVRows != 0 {
		out += fmt.Sprintf(" tile=%dx%d", s.QueryRows, s.KVRows)
	}
	if s.GradKeys != 0 {
		out += fmt.Sprintf(" grad_keys=%d", s.GradKeys)
	}
	if s.GradOff != 0 {
		out += fmt.Sprintf(" grad_off=%d", s.GradOff)
	}
	if s.GradMMASync {
		out += " grad=mma-sync"
	}
	if s.GradStages != 0 {
		out += fmt.Sprintf(" grad_stages=%d", s.GradStages)
	}
	if s.GradWGMMAOff != 0 {
		out += fmt.Sprintf(" grad_wgmma_off=%d", s.GradWGMMAOff)
	}
	return out
}

// check validates the spec against what the kernel and its launch take.
func (s Spec) check() error {
	if err := s.AttentionShape.Check(); err != nil {
		return err
	}
	if _, _, _, err := attnDtypeCode(s.Dtype); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	switch {
	case s.QueryRows != 0 && s.QueryRows != 64 && s.QueryRows != 128:
		return fmt.Errorf("%s: query tile of %d rows (allowed: 64, 128, or 0 for the default)", s, s.QueryRows)
	case s.KVRows != 0 && s.KVRows != 32 && s.KVRows != 64:
		return fmt.Errorf("%s: kv tile of %d rows (allowed: 32, 64, or 0 for the default)", s, s.KVRows)
	case s.GradKeys != 0 && s.GradKeys != 64 && s.GradKeys != 128:
		return fmt.Errorf("%s: backward key tile of %d keys (allowed: 64, 128, or 0 for the default)", s, s.GradKeys)
	case s.GradStages != 0 && (s.GradStages < 2 || s.GradStages > 4):
		return fmt.Errorf("%s: wgmma backward ring of %d stages (allowed: 2 to 4, or 0 for the default)", s, s.GradStages)
	case s.GradWGMMAOff < 0 || s.GradWGMMAOff > 7:
		return fmt.Errorf("%s: wgmma backward changes off %d (allowed: 0 to 7, bits 1, 2, 4)", s, s.GradWGMMAOff)
	case s.GradOff < 0 || s.GradOff > 31:
		return fmt.Errorf("%s: backward changes off %d (allowed: 0 to 31, bits 1, 2, 4, 8, 16)", s, s.GradOff)
	case s.HeadDim > 256:
		return fmt.Errorf("%s: head_dim %d > 256, the largest the kernel is built for", s, s.HeadDim)
	case s.WGMMAKeyRows != 0 && s.WGMMAKeyRows != 64 && s.WGMMAKeyRows != 96 && s.WGMMAKeyRows != 128:
		return fmt.Errorf("%s: wgmma k/v tile of %d keys (allowed: 64, 96, 128, or 0 for the default)", s, s.WGMMAKeyRows)
	case s.WGMMAStages == 1 || s.WGMMAStages < 0 || s.WGMMAStages > 8:
		return fmt.Errorf("%s: wgmma k/v ring of %d stages (allowed: 2 to 8, or 0 for the default)", s, s.WGMMAStages)
	case s.WGMMADebug < 0 || s.WGMMADebug > 2:
		return fmt.Errorf("%s: wgmma debug mode %d (allowed: 0, 1, 2)", s, s.WGMMADebug)
	case s.Batch > 65535 || s.Heads > 65535:
		return fmt.Errorf("%s: batch and heads must be at most 65535, the grid's z and y limits", s)
	case attnTilesFor(s.HeadDim).smemBytes() > attnMaxSmem:
		return fmt.Errorf("%s: tiles need %d bytes of shared memory > %d", s, attnTilesFor(s.HeadDim).smemBytes(), attnMaxSmem)
	}
	return nil
}

// bytes is q, k, v and out on the device.
func (s Spec) bytes() (q, kv int64) {
	_, _, eb, _ := attnDtypeCode(s.Dtype)
	return int64(s.QLen()) * int64(eb), int64(s.KLen()) * int64(eb)
}

// DeviceBytes is what Time allocates (PeakMemoryBytes), rounded as
// allocated, so a caller can compare it with the device's free memory.
func (s Spec) DeviceBytes() (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	q, kv := s.bytes()
	return 2*r4b(q) + 2*kv, nil
}

func r4b(n int64) int64 { return (n + 3) / 4 * 4 }

func (s Spec) source() string {
	return gpu.Program(kernelFS, "attention.cu", "attention_frag.cuh", "attention_mma.cu", "attention_bwd.cu", "attention_bwd_mma.cu")
}

func (s Spec) defines() []string {
	xa, _, _, _ := attnDtypeCode(s.Dtype)
	// Both kernels' geometries: a 16-bit program holds both (the tensor-core
	// kernel compiles only for XA_DT != 0).
	t, m, g := attnTilesFor(s.HeadDim), mmaTilesFor(s.HeadDim, s.QueryRows, s.KVRows), gradTilesFor(s.HeadDim)
	return []string{"-DXB_BF16=0", fmt.Sprintf("-DXA_DT=%d", xa), fmt.Sprintf("-DXA_D=%d", s.HeadDim),
		fmt.Sprintf("-DXA_DP=%d", t.DP), fmt.Sprintf("-DXA_BM=%d", t.BM), fmt.Sprintf("-DXA_BN=%d", t.BN),
		fmt.Sprintf("-DXM_DP=%d", m.DP), fmt.Sprintf("-DXM_BM=%d", m.BM), fmt.Sprintf("-DXM_BN=%d", m.BN),
		fmt.Sprintf("-DXM_FAST=%d", b2i(!s.PlainLoads)), fmt.Sprintf("-DXM_MINB=%d", m.minBlocks()),
		fmt.Sprintf("-DXG_BM=%d", g.BM), fmt.Sprintf("-DXG_BN=%d", g.BN), fmt.Sprintf("-DXG_DP=%d", mmaGradDP(s.HeadDim)), fmt.Sprintf("-DXG_BK=%d", s.gradKeys()),
		fmt.Sprintf("-DXG_OFF=%d", s.GradOff)}
}

// Supports says whether this device can run spec, and why not.
func Supports(d *gpu.Device, spec Spec) error {
	if err := spec.check(); err != nil {
		return err
	}
	// On rocm the FMA kernel runs (r.sm() is 0, so tiles never pick the
	// tensor-core kernel, whose PTX compiles out under XB_HIP): compiled
	// for gfx90a and gfx1030 by TestHIPRTC, checked on the emulator at
	// wave32 and wave64 by TestEmuHIP.
	if d.RT.Kind != "cuda" && d.RT.Kind != "rocm" {
		return fmt.Errorf("%s: attention on %s is not implemented", spec, d.RT.Kind)
	}
	if need := spec.deviceTiles(d.RT).smemBytes(); need > d.RT.MaxDynSmem {
		return fmt.Errorf("%s: needs %d bytes of shared memory per block, %s allows %d", spec, need, d.Info().Name, d.RT.MaxDynSmem)
	}
	return nil
}
