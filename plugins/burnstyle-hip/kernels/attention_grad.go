package kernels

// The attention workload's backward phases (docs/workloads/attention.md,
// "Phases"): backward times dq, dk, dv from dout given one forward's saved
// state (out and the rows' log-sum-exp, made before timing); both times the
// forward and the backward in one call. Pure Go (package cpu) on the CPU,
// our kernels (gpu/attention's backward.go) on CUDA.

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
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/host"
)

// cpuAttentionGradCall prepares one timed call of phase (backward or both)
// on the CPU: seeded inputs in the dtype and, for backward, the forward's
// out (rounded to the dtype, as a GPU stores it) and row log-sum-exps.
// Outputs are rounded to the dtype inside the call, as the forward's are.
func cpuAttentionGradCall(s gpuattn.Spec, phase string) (func() error, error) {
	q, k, v := attentionInputs(s)
	dout := attentionDout(s)
	grad := func(out, lse []float32) error {
		dq, dk, dv, err := cpu.AttentionBackward(s.AttentionShape, q, k, v, out, dout, lse)
		if err == nil {
			roundTo(s.Dtype, dq)
			roundTo(s.Dtype, dk)
			roundTo(s.Dtype, dv)
		}
		return err
	}
	if phase == workload.PhaseBoth {
		return func() error {
			out, lse, err := cpu.AttentionLSE(s.AttentionShape, q, k, v)
			if err != nil {
				return err
			}
			roundTo(s.Dtype, out)
			return grad(out, lse)
		}, nil
	}
	out, lse, err := cpu.AttentionLSE(s.AttentionShape, q, k, v)
	if err != nil {
		return nil, err
	}
	roundTo(s.Dtype, out)
	return func() error { return grad(out, lse) }, nil
}

// attentionDout is the seeded output gradient, uniform in [-1, 1) as the
// workload's fixture, rounded to the dtype (its own stream: q, k, v stay
// those of the forward phase).
func attentionDout(s gpuattn.Spec) []float32 {
	rng := rand.New(rand.NewPCG(1, 4))
	x := make([]float32, s.QLen())
	for i := range x {
		x[i] = 2*rng.Float32() - 1
	}
	roundTo(s.Dtype, x)
	return x
}

// runAttentionGradCPU times phase on the CPU, as RunAttention times the
// forward: the first call alone is compile_ms, then warmup, then repeats.
func runAttentionGradCPU(ctx context.Context, req backend.RunRequest, res result.Result, spec gpuattn.Spec) (result.Result, error) {
	cfg := req.Config
	if st, msg := host.Fits(attentionGradHostBytes(spec.AttentionShape, runtime.GOMAXPROCS(0))); st != result.StatusOK {
		res.Status, res.Message = st, "attention "+cfg.Phase+" on the CPU "+msg
		return res, nil
	}
	call, err := cpuAttentionGradCall(spec, cfg.Phase)
	if err != nil {
		res.Status, res.Message = result.StatusFailed, "attention forward before the backward: "+err.Error()
		return res, nil
	}
	res.PeakMemoryBytes = int64(attentionGradHostBytes(spec.AttentionShape, runtime.GOMAXPROCS(0)))
	return timeOnCPU(ctx, req, res, "attention "+cfg.Phase, call)
}

// exportAttentionGrad reads q, k, v and dout, runs one forward and one
// backward and writes out, dq, dk, dv as F32 in the workload's shapes.
func exportAttentionGrad(ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse, spec gpuattn.Spec, onGPU bool) (backend.ExportResponse, error) {
	in, err := tensorfile.Read(req.InputsPath)
	if err != nil {
		return resp, fmt.Errorf("export %s attention %s: %w", backendName, req.Config.Phase, err)
	}
	var x [4][]float32
	for i, name := range []string{"q", "k", "v", "dout"} {
		n := spec.KLen()
		if name == "q" || name == "dout" {
			n = spec.QLen()
		}
		if x[i], err = floats(in, name, n); err != nil {
			return resp, fmt.Errorf("export %s attention %s: %w", backendName, req.Config.Phase, err)
		}
	}
	var g [4][]float32 // out, dq, dk, dv
	if onGPU {
		g[0], g[1], g[2], g[3], err = exportAttentionGradGPU(ctx, &resp, spec, x)
	} else {
		resp.Device = host.CPUDevice()
		g[0], g[1], g[2], g[3], err = cpu.AttentionGradDtype(spec.Dtype, spec.AttentionShape, x[0], x[1], x[2], x[3])
	}
	if err != nil {
		resp.Status, resp.Message = result.StatusFailed, "attention "+req.Config.Phase+": "+err.Error()
		return resp, nil
	}
	qs, ks := []int{spec.Batch, spec.Heads, spec.SeqLen, spec.HeadDim}, []int{spec.Batch, spec.KVHeads, spec.KVLen, spec.HeadDim}
	outs := map[string]tensorfile.Tensor{"out": tensorfile.F32(qs, g[0]), "dq": tensorfile.F32(qs, g[1]),
		"dk": tensorfile.F32(ks, g[2]), "dv": tensorfile.F32(ks, g[3])}
	if err := tensorfile.Write(req.OutputPath, outs); err != nil {
		return resp, fmt.Errorf("export %s attention %s: %w", backendName, req.Config.Phase, err)
	}
	resp.Status = result.StatusOK
	return resp, nil
}

// exportAttentionGradGPU is the GPU's export: one forward and backward on
// the process-wide CUDA device.
func exportAttentionGradGPU(ctx context.Context, resp *backend.ExportResponse, spec gpuattn.Spec, x [4][]float32) (out, dq, dk, dv []float32, err error) {
	resp.Device = gpu.SharedInfo()
	return gpuattn.ExportGradShared(ctx, spec, x[0], x[1], x[2], x[3])
}

// runAttentionGradGPU times phase with the GPU kernels (gpu/attention's
// backward.go), reporting which kernels ran as the forward does.
func runAttentionGradGPU(ctx context.Context, req backend.RunRequest, res result.Result, spec gpuattn.Spec) (result.Result, error) {
	cfg := req.Config
	t, err := gpuattn.TimeGradShared(ctx, spec, cfg.Phase, gpu.Calls{Warmup: cfg.Warmup, Repeats: cfg.Repeats, ColdCache: req.Mode.ColdCache}, 1)
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("run %s attention %s: %w", backendName, cfg.Phase, ctx.Err())
		}
		res.Status, res.Message = result.StatusFailed, "attention "+cfg.Phase+" on the GPU: "+err.Error()
		return res, nil
	}
	res.Device, res.Env.Timing = t.Device, t.Timing
	res.Env.Settings = map[string]string{"attention_kernel": t.Kernel}
	res.Status, res.SamplesMs, res.CompileMs, res.PeakMemoryBytes = result.StatusOK, t.SamplesMs, t.CompileMs, t.PeakMemoryBytes
	return res, nil
}

// gradPhase says whether phase computes the gradients.
func gradPhase(phase string) bool {
	return phase == workload.PhaseBackward || phase == workload.PhaseBoth
}
