package burnstylehip

// The GEMM workload (docs/workloads/gemm.md): cuBLAS through package gpu on
// CUDA, the blocked pure-Go kernel of package cpu elsewhere.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	gpugemm "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// gemmSpec reads the validated configuration.
func gemmSpec(cfg result.Config) gpugemm.Spec {
	layout := cfg.Get("layout")
	return gpugemm.Spec{Batch: cfg.Int("batch"), M: cfg.Int("m"), N: cfg.Int("n"), K: cfg.Int("k"),
		TransA: len(layout) == 2 && layout[0] == 't', TransB: len(layout) == 2 && layout[1] == 't', Dtype: cfg.Dtype()}
}

// gemmOnGPU says whether a request runs on the GPU: cuda always, auto when
// a CUDA GPU and cuBLAS load.
func gemmOnGPU(device string) bool {
	switch device {
	case "cuda":
		return true
	case "cpu":
		return false
	}
	return gpugemm.Available() == nil
}

func runGEMM(ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
	spec, cfg := gemmSpec(req.Config), req.Config
	lt := req.Variant == cublasLtVariant.Name
	if lt && !gemmOnGPU(req.Device) {
		res.Status, res.Message = result.StatusUnsupported, "the cublaslt variant needs a CUDA GPU with cuBLASLt: "+gpuReason()
		return res, nil
	}
	if gemmOnGPU(req.Device) {
		t, err := gpugemm.TimeShared(ctx, spec, cfg.Warmup, cfg.Repeats, 1, gpugemm.Mode{Cold: req.Mode.ColdCache, Graph: req.Mode.CUDAGraph, Lt: lt})
		if err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("run %s gemm: %w", Name, ctx.Err())
			}
			res.Status, res.Message = result.StatusFailed, "gemm on the GPU: "+err.Error()
			return res, nil
		}
		res.Device, res.Env.Timing = t.Device, t.Timing
		res.Env.Versions[map[bool]string{false: "cublas", true: "cublaslt"}[lt]] = t.Library
		res.Status, res.SamplesMs, res.CompileMs, res.PeakMemoryBytes = result.StatusOK, t.SamplesMs, t.CompileMs, t.PeakMemoryBytes
		return res, nil
	}
	e, _ := newCPUEngine()
	res.Device = e.Device()
	if st, msg := hostFits(gemmHostBytes(spec)); st != result.StatusOK {
		res.Status, res.Message = st, "gemm on the CPU "+msg
		return res, nil
	}
	a, b := gemmInputs(spec)
	res.PeakMemoryBytes = int64(len(a)+len(b)+spec.Batch*spec.M*spec.N) * 4
	var callErr error
	step := func() float64 {
		start := time.Now()
		_, callErr = cpu.GEMMDtype(spec.Dtype, spec.Batch, spec.M, spec.N, spec.K, spec.TransA, spec.TransB, a, b)
		return float64(time.Since(start).Nanoseconds()) / 1e6
	}
	res.CompileMs = step()
	for i := 0; i < cfg.Warmup && callErr == nil; i++ {
		step()
	}
	for i := 0; i < cfg.Repeats && callErr == nil; i++ {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("run %s gemm: %w", Name, err)
		}
		if req.Mode.ColdCache {
			cpuFlush() // before the clock starts: not in the sample
		}
		res.SamplesMs = append(res.SamplesMs, step())
	}
	if req.Mode.ColdCache {
		res.Env.Timing += fmt.Sprintf("; before each timed call a write over a %d MiB host buffer (cold caches), not timed", len(cpuFlushBuf)>>20)
	}
	if callErr != nil {
		res.Status, res.Message, res.SamplesMs = result.StatusFailed, callErr.Error(), []float64{}
		return res, nil
	}
	res.Status = result.StatusOK
	return res, nil
}

// gemmInputs are seeded uniform values in the stored layouts.
func gemmInputs(s gpugemm.Spec) (a, b []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 2*rng.Float32() - 1
		}
		return v
	}
	return fill(s.Batch * s.M * s.K), fill(s.Batch * s.K * s.N)
}

func exportGEMM(ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
	spec := gemmSpec(req.Config)
	if !gemmOnGPU(req.Device) {
		if st, msg := hostFits(gemmHostBytes(spec)); st != result.StatusOK {
			resp.Status, resp.Message = st, "gemm on the CPU "+msg
			return resp, nil
		}
	}
	in, err := tensorfile.Read(req.InputsPath)
	if err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", Name, err)
	}
	a, err := floats(in, "a", spec.Batch*spec.M*spec.K)
	if err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", Name, err)
	}
	b, err := floats(in, "b", spec.Batch*spec.K*spec.N)
	if err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", Name, err)
	}
	var c []float32
	lt := req.Variant == cublasLtVariant.Name
	if lt && !gemmOnGPU(req.Device) {
		resp.Status, resp.Message = result.StatusUnsupported, "the cublaslt variant needs a CUDA GPU with cuBLASLt: "+gpuReason()
		return resp, nil
	}
	if gemmOnGPU(req.Device) {
		c, err = gpugemm.ExportSharedWith(ctx, spec, a, b, gpugemm.Mode{Lt: lt})
		resp.Device = gpu.SharedInfo()
	} else {
		e, _ := newCPUEngine()
		resp.Device = e.Device()
		c, err = cpu.GEMMDtype(spec.Dtype, spec.Batch, spec.M, spec.N, spec.K, spec.TransA, spec.TransB, a, b)
	}
	if err != nil {
		resp.Status, resp.Message = result.StatusFailed, "gemm: "+err.Error()
		return resp, nil
	}
	out := tensorfile.F32([]int{spec.Batch, spec.M, spec.N}, c)
	if err := tensorfile.Write(req.OutputPath, map[string]tensorfile.Tensor{"c": out}); err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", Name, err)
	}
	resp.Status = result.StatusOK
	return resp, nil
}

// floats reads one F32 tensor of n elements.
func floats(m map[string]tensorfile.Tensor, name string, n int) ([]float32, error) {
	t, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("inputs have no tensor %q", name)
	}
	v, err := t.Float32s()
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	if len(v) != n {
		return nil, fmt.Errorf("tensor %q has %d elements, want %d", name, len(v), n)
	}
	return v, nil
}
