package kernels

// The attention workload's forward (docs/workloads/attention.md): our own
// kernels through package gpu on CUDA (wgmma on Hopper, mma.sync else), the pure-Go
// rows of package cpu elsewhere. Backward and both: attention_grad.go.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"

	gpuattn "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/attention"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/host"
)

// MMASyncVariant runs the attention on the mma.sync kernels where the
// Hopper (wgmma) kernels would run (sm_90, bfloat16 or float16, head dim
// 64 or 128): the forward, and in the backward phases both the forward
// that saves the backward's state (the plain backend's is the wgmma kernel
// built to save it) and the backward.
// Elsewhere it runs what the plain backend runs. The baseline the wgmma
// kernels are measured against, in the same run.
var MMASyncVariant = backend.Variant{
	Name:        "mma-sync",
	Description: "attention forward and backward on the mma.sync (FlashAttention-2) kernels instead of the Hopper wgmma kernels (cuda only)",
	Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{{
		Workload: attention.Name,
		Phases:   []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseBoth},
		Devices:  []string{"cuda"},
		Values:   map[string][]string{"dtype": {"bfloat16", "float16"}},
		Max:      map[string]int64{"head_dim": 256},
	}}},
}

// WGMMAOverlapVariant runs the Hopper kernel's consumers in FA3's
// intra-warpgroup overlap (tile i's softmax while P.v of tile i-1 runs;
// 96-key tiles at head dim 128) instead of the default serial schedule
// (gpu/attention's WGMMAOverlap). On the H100 it ran slower than the serial
// schedule (results/h100-wgmma/README.md). Elsewhere it runs
// what the plain backend runs. Forward only.
var WGMMAOverlapVariant = backend.Variant{
	Name:        "wgmma-overlap",
	Description: "attention forward on the Hopper wgmma kernel with the softmax of a tile overlapped with the previous tile's P.v, instead of the serial schedule (cuda only)",
	Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{{
		Workload: attention.Name,
		Phases:   []string{workload.PhaseForward},
		Devices:  []string{"cuda"},
		Values:   map[string][]string{"dtype": {"bfloat16", "float16"}},
		Max:      map[string]int64{"head_dim": 256},
	}}},
}

// attentionVariant sets the kernel knobs a variant stands for.
func attentionVariant(spec *gpuattn.Spec, variant string) {
	spec.MMASync = variant == MMASyncVariant.Name
	spec.GradMMASync = spec.MMASync
	spec.WGMMAOverlap = variant == WGMMAOverlapVariant.Name
}

// AttentionSpec reads the configuration, resolving the workload's "0 means
// equal" defaults of kv_heads and kv_len.
func AttentionSpec(cfg result.Config) gpuattn.Spec {
	s := cpu.AttentionShape{Batch: cfg.Int("batch"), Heads: cfg.Int("heads"), KVHeads: cfg.Int("kv_heads"),
		SeqLen: cfg.Int("seq_len"), KVLen: cfg.Int("kv_len"), HeadDim: cfg.Int("head_dim"), Causal: cfg.Get("causal") == "true"}
	if s.KVHeads == 0 {
		s.KVHeads = s.Heads
	}
	if s.KVLen == 0 {
		s.KVLen = s.SeqLen
	}
	return gpuattn.Spec{AttentionShape: s, Dtype: cfg.Dtype()}
}

// attentionOnGPU says whether a request runs on the GPU, and if it cannot
// why not: cuda always tries (and a spec the kernel does not take is
// unsupported), auto takes the GPU when it opens and accepts the spec.
// phase picks the check: the backward phases run other kernels.
func attentionOnGPU(device, phase string, s gpuattn.Spec) (bool, error) {
	supported := gpuattn.Supported
	if gradPhase(phase) {
		supported = gpuattn.SupportedGrad
	}
	switch device {
	case "cuda":
		if _, err := gpu.Shared("cuda"); err != nil {
			return true, fmt.Errorf("device \"cuda\" is not available: %w", err)
		}
		return true, supported(s)
	case "cpu":
		return false, nil
	}
	return supported(s) == nil, nil
}

func RunAttention(ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
	spec, cfg := AttentionSpec(req.Config), req.Config
	attentionVariant(&spec, req.Variant)
	if err := spec.AttentionShape.Check(); err != nil {
		return res, fmt.Errorf("run %s: invalid config: %w", backendName, err)
	}
	onGPU, err := attentionOnGPU(req.Device, cfg.Phase, spec)
	if err != nil {
		res.Status, res.Message = result.StatusUnsupported, err.Error()
		return res, nil
	}
	if gradPhase(cfg.Phase) {
		if onGPU {
			return runAttentionGradGPU(ctx, req, res, spec)
		}
		return runAttentionGradCPU(ctx, req, res, spec)
	}
	if onGPU {
		t, err := gpuattn.TimeShared(ctx, spec, gpu.Calls{Warmup: cfg.Warmup, Repeats: cfg.Repeats, ColdCache: req.Mode.ColdCache}, 1)
		if err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("run %s attention: %w", backendName, ctx.Err())
			}
			res.Status, res.Message = result.StatusFailed, "attention on the GPU: "+err.Error()
			return res, nil
		}
		res.Device, res.Env.Timing = t.Device, t.Timing
		// Which kernel ran (wgmma on Hopper, mma.sync, CUDA cores), where
		// the other backends name theirs (jax's xla_kernel).
		res.Env.Settings = map[string]string{"attention_kernel": t.Kernel}
		res.Status, res.SamplesMs, res.CompileMs, res.PeakMemoryBytes = result.StatusOK, t.SamplesMs, t.CompileMs, t.PeakMemoryBytes
		return res, nil
	}
	res.Device = host.CPUDevice()
	if st, msg := host.Fits(attentionHostBytes(spec.AttentionShape, runtime.GOMAXPROCS(0))); st != result.StatusOK {
		res.Status, res.Message = st, "attention on the CPU "+msg
		return res, nil
	}
	// The CPU stores bfloat16/float16 tensors as float32 holding the
	// rounded values (rounded once, before timing, as a GPU's inputs are
	// already in the dtype), computes in float32 and rounds out per call.
	q, k, v := attentionInputs(spec)
	res.PeakMemoryBytes = int64(2*len(q)+2*len(k)+spec.KVLen*runtime.GOMAXPROCS(0)) * 4
	call := func() error {
		out, err := cpu.Attention(spec.AttentionShape, q, k, v)
		if err == nil {
			roundTo(spec.Dtype, out)
		}
		return err
	}
	return timeOnCPU(ctx, req, res, "attention", call)
}

// attentionInputs are seeded values in the workload's fixture ranges (q, k
// in [-2, 2), v in [-1, 1)), rounded to the dtype.
func attentionInputs(s gpuattn.Spec) (q, k, v []float32) {
	rng := rand.New(rand.NewPCG(1, 3))
	fill := func(n int, span float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = span * (2*rng.Float32() - 1)
		}
		roundTo(s.Dtype, x)
		return x
	}
	return fill(s.QLen(), 2), fill(s.KLen(), 2), fill(s.KLen(), 1)
}

// roundTo rounds x in place to bfloat16 or float16 (nearest even); float32
// is left alone.
func roundTo(dtype string, x []float32) {
	round, _ := cpu.Rounding(dtype) // the capabilities allowed only dtypes the table has
	if round == nil {
		return
	}
	for i, e := range x {
		x[i] = round(e)
	}
}

func ExportAttention(ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
	spec := AttentionSpec(req.Config)
	attentionVariant(&spec, req.Variant)
	if err := spec.AttentionShape.Check(); err != nil {
		return resp, fmt.Errorf("export %s: invalid config: %w", backendName, err)
	}
	onGPU, err := attentionOnGPU(req.Device, req.Config.Phase, spec)
	if err != nil {
		resp.Status, resp.Message = result.StatusUnsupported, err.Error()
		return resp, nil
	}
	if !onGPU {
		if st, msg := host.Fits(attentionHostBytes(spec.AttentionShape, runtime.GOMAXPROCS(0))); st != result.StatusOK {
			resp.Status, resp.Message = st, "attention on the CPU "+msg
			return resp, nil
		}
	}
	if gradPhase(req.Config.Phase) {
		return exportAttentionGrad(ctx, req, resp, spec, onGPU)
	}
	in, err := tensorfile.Read(req.InputsPath)
	if err != nil {
		return resp, fmt.Errorf("export %s attention: %w", backendName, err)
	}
	var qkv [3][]float32
	for i, name := range []string{"q", "k", "v"} {
		n := spec.KLen()
		if name == "q" {
			n = spec.QLen()
		}
		if qkv[i], err = floats(in, name, n); err != nil {
			return resp, fmt.Errorf("export %s attention: %w", backendName, err)
		}
	}
	var out []float32
	if onGPU {
		out, err = gpuattn.ExportShared(ctx, spec, qkv[0], qkv[1], qkv[2])
		resp.Device = gpu.SharedInfo()
	} else {
		resp.Device = host.CPUDevice()
		out, err = cpu.AttentionDtype(spec.Dtype, spec.AttentionShape, qkv[0], qkv[1], qkv[2])
	}
	if err != nil {
		resp.Status, resp.Message = result.StatusFailed, "attention: "+err.Error()
		return resp, nil
	}
	t := tensorfile.F32([]int{spec.Batch, spec.Heads, spec.SeqLen, spec.HeadDim}, out)
	if err := tensorfile.Write(req.OutputPath, map[string]tensorfile.Tensor{"out": t}); err != nil {
		return resp, fmt.Errorf("export %s attention: %w", backendName, err)
	}
	resp.Status = result.StatusOK
	return resp, nil
}
