package gpu

// The attention workload's forward (docs/workloads/attention.md) on CUDA,
// with our own kernel (kernels/attention.cu), compiled by NVRTC per head dim
// and dtype.
//
// Algorithm: FlashAttention-2's forward (Dao 2023) on CUDA cores. One block
// of 128 threads per (query tile, batch*head); the q tile is loaded once,
// scaled by log2(e)/sqrt(D), and k/v tiles stream through shared memory
// while an online softmax keeps each row's running max and sum in float32
// and the unnormalised output in registers; the output is divided by the
// sum once. Tiles wholly above the bottom-right causal diagonal are skipped,
// tail tiles of seq_len, kv_len and a head dim that is not a multiple of 8
// are masked, and GQA maps query head h to kv head h/(H/KH) by index.
// bfloat16 and float16 are loaded to float32 and the output rounded back
// (nearest even); all math is float32. Tiles (query rows x kv rows, all
// float32 in shared memory): head dim up to 64: 64x64 (66 KB at 64); up
// to 128: 64x32 (73 KB at 128); up to 256: 32x16 (66 KB at 256), within
// the 99 KB the brief allows. Verified on the CPU emulator only (g++
// standing in for NVRTC, blocks as fibers; odd shapes, GQA, causal,
// float32/bfloat16/float16, see attention_test.go): nothing has been run or
// timed on a real GPU yet, and tensor cores are not used.

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
)

// AttentionSpec is one attention forward configuration, kv_heads and kv_len
// resolved (never the workload's 0).
type AttentionSpec struct {
	cpu.AttentionShape
	Dtype string // float32, bfloat16, float16
}

// AttentionTiming is what TimeAttention measured.
type AttentionTiming struct {
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
}

// attnTiles is the compiled kernel's geometry for one head dim.
type attnTiles struct{ BM, BN, DP int }

const attnThreads = 128 // XA_NT

// attnTilesFor picks the tiles: the widest that keep shared memory under
// attnMaxSmem (larger D leaves room for fewer rows).
func attnTilesFor(d int) attnTiles {
	dp := (d + 7) / 8 * 8
	switch {
	case dp <= 64:
		return attnTiles{64, 64, dp}
	case dp <= 128:
		return attnTiles{64, 32, dp}
	}
	return attnTiles{32, 16, dp}
}

// attnMaxSmem is the shared memory the kernel may ask for: 99 KB, the
// per-block opt-in limit of sm_86/sm_89 (sm_80 allows 163 KB, sm_90 227 KB),
// so one tile table fits every current NVIDIA GPU.
const attnMaxSmem = 99 << 10

// smemBytes mirrors XA_SMEM_FLOATS in attention.cu; the emulator fails a
// launch that gives less than the kernel computes.
func (t attnTiles) smemBytes() int {
	qs := t.DP + 1
	return 4 * (t.BM*qs + t.BN*qs + t.BN*t.DP + t.BM*(t.BN+1))
}

// attnDtypeCode is XA_DT and the cudaDataType encodeGEMM/decodeGEMM take.
func attnDtypeCode(dtype string) (xa int, dt int32, bytes int, err error) {
	switch dtype {
	case "float32":
		return 0, cudaR32F, 4, nil
	case "bfloat16":
		return 1, cudaR16BF, 2, nil
	case "float16":
		return 2, cudaR16F, 2, nil
	}
	return 0, 0, 0, fmt.Errorf("attention: unknown dtype %q (want float32, bfloat16 or float16)", dtype)
}

func (s AttentionSpec) String() string {
	return "attention " + s.AttentionShape.String() + " dtype=" + s.Dtype
}

// check validates the spec against what the kernel and its launch take.
func (s AttentionSpec) check() error {
	if err := s.AttentionShape.Check(); err != nil {
		return err
	}
	if _, _, _, err := attnDtypeCode(s.Dtype); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	switch {
	case s.HeadDim > 256:
		return fmt.Errorf("%s: head_dim %d > 256, the largest the kernel is built for", s, s.HeadDim)
	case s.Batch*s.Heads > 65535:
		return fmt.Errorf("%s: batch*heads = %d exceeds 65535, the grid's y limit", s, s.Batch*s.Heads)
	case attnTilesFor(s.HeadDim).smemBytes() > attnMaxSmem:
		return fmt.Errorf("%s: tiles need %d bytes of shared memory > %d", s, attnTilesFor(s.HeadDim).smemBytes(), attnMaxSmem)
	}
	return nil
}

// bytes is q, k, v and out on the device.
func (s AttentionSpec) bytes() (q, kv int64) {
	_, _, eb, _ := attnDtypeCode(s.Dtype)
	return int64(s.QLen()) * int64(eb), int64(s.KLen()) * int64(eb)
}

// DeviceBytes is what TimeAttention allocates (PeakMemoryBytes), rounded as
// allocated, so a caller can compare it with the device's free memory.
func (s AttentionSpec) DeviceBytes() (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	q, kv := s.bytes()
	return 2*r4b(q) + 2*kv, nil
}

func r4b(n int64) int64 { return (n + 3) / 4 * 4 }

func (s AttentionSpec) source() string {
	var b strings.Builder
	for _, f := range []string{"prelude.cuh", "attention.cu"} {
		data, err := kernelFS.ReadFile("kernels/" + f)
		if err != nil {
			panic(err) // embedded at build time; cannot be missing
		}
		fmt.Fprintf(&b, "// ---- %s\n%s\n", f, data)
	}
	return b.String()
}

func (s AttentionSpec) defines() []string {
	xa, _, _, _ := attnDtypeCode(s.Dtype)
	t := attnTilesFor(s.HeadDim)
	return []string{"-DXB_BF16=0", fmt.Sprintf("-DXA_DT=%d", xa), fmt.Sprintf("-DXA_D=%d", s.HeadDim),
		fmt.Sprintf("-DXA_DP=%d", t.DP), fmt.Sprintf("-DXA_BM=%d", t.BM), fmt.Sprintf("-DXA_BN=%d", t.BN)}
}

// AttentionSupports says whether this device can run spec, and why not.
func (d *Device) AttentionSupports(spec AttentionSpec) error {
	if err := spec.check(); err != nil {
		return err
	}
	if d.rt.kind != "cuda" {
		return fmt.Errorf("%s: attention on %s is not implemented (the kernel is checked on CUDA only)", spec, d.rt.kind)
	}
	if need := attnTilesFor(spec.HeadDim).smemBytes(); need > d.rt.maxDynSmem {
		return fmt.Errorf("%s: needs %d bytes of shared memory per block, %s allows %d", spec, need, d.info.Name, d.rt.maxDynSmem)
	}
	return nil
}

// attnKernel is one compiled program and its device buffers.
type attnKernel struct {
	spec           AttentionSpec
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
	t := attnTilesFor(spec.HeadDim)
	a := &attnKernel{spec: spec, grid: (spec.SeqLen + t.BM - 1) / t.BM, smem: t.smemBytes(), nt: attnThreads}
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
	if a.fn, err = r.function(a.mod, "xa_attention_fwd"); err == nil && r.setDynSmem != nil {
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
	return r.launch("xa_attention_fwd", a.fn, [3]int{a.grid, s.Batch * s.Heads, 1}, [3]int{a.nt, 1, 1}, a.smem,
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
	t := attnTilesFor(a.spec.HeadDim)
	return fmt.Sprintf("xa_attention_fwd (CUDA cores) %dx%d tiles, %d threads, %d B shared, %d regs, %d B local",
		t.BM, t.BN, a.nt, a.smem, a.regs, a.local)
}

// TimeAttention is Device.TimeAttention on Shared("cuda").
func TimeAttention(ctx context.Context, spec AttentionSpec, warmup, repeats int, seed uint64, cold bool) (AttentionTiming, error) {
	d, err := Shared("cuda")
	if err != nil {
		return AttentionTiming{}, err
	}
	return d.TimeAttention(ctx, spec, warmup, repeats, seed, cold)
}

// ExportAttention is Device.ExportAttention on Shared("cuda").
func ExportAttention(ctx context.Context, spec AttentionSpec, q, k, v []float32) ([]float32, error) {
	d, err := Shared("cuda")
	if err != nil {
		return nil, err
	}
	return d.ExportAttention(ctx, spec, q, k, v)
}

// AttentionSupported is nil when the process-wide CUDA device opens and
// accepts spec; otherwise the reason.
func AttentionSupported(spec AttentionSpec) error {
	d, err := Shared("cuda")
	if err != nil {
		return err
	}
	return d.AttentionSupports(spec)
}
