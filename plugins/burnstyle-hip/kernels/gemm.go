package kernels

// The GEMM workload (docs/workloads/gemm.md): cuBLAS (or the cublaslt
// variant's cuBLASLt) on cuda and hipBLASLt (or the rocblas variant's
// rocBLAS) on rocm, through package gpu; the blocked pure-Go kernel of
// package cpu elsewhere.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	gpugemm "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/host"
)

// gemmSpec reads the validated configuration.
func gemmSpec(cfg result.Config) gpugemm.Spec {
	layout := cfg.Get("layout")
	return gpugemm.Spec{Batch: cfg.Int("batch"), M: cfg.Int("m"), N: cfg.Int("n"), K: cfg.Int("k"),
		TransA: len(layout) == 2 && layout[0] == 't', TransB: len(layout) == 2 && layout[1] == 't', Dtype: cfg.Dtype()}
}

// GEMMKind is the GPU a request runs on ("": the CPU): the one named, and
// under auto a CUDA GPU with cuBLAS, else a ROCm one.
func GEMMKind(device string) string {
	switch device {
	case "cuda", "rocm":
		return device
	case "cpu":
		return ""
	}
	for _, k := range []string{"cuda", "rocm"} {
		if gpugemm.Available(k) == nil {
			return k
		}
	}
	return ""
}

// gemmMode is the request's library on its GPU, or why the variant asked
// for cannot run there (a variant is its vendor's: cublaslt on cuda,
// rocblas on rocm).
func gemmMode(variant, kind string) (gpugemm.Mode, string) {
	m := gpugemm.Mode{Lt: variant == CublasLtVariant.Name, RocBLAS: variant == RocblasVariant.Name}
	switch {
	case m.Lt && kind != "cuda":
		return m, "the cublaslt variant needs a CUDA GPU with cuBLASLt: " + gpuReason("cuda")
	case m.RocBLAS && kind != "rocm":
		return m, "the rocblas variant needs a ROCm GPU with rocBLAS: " + gpuReason("rocm")
	}
	return m, ""
}

// libraryKey is env.versions' key for a library version string: its first
// word ("hipblaslt 1.1.0" is hipblaslt's).
func libraryKey(library string) string {
	k, _, _ := strings.Cut(library, " ")
	return k
}

func RunGEMM(ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
	spec, cfg := gemmSpec(req.Config), req.Config
	kind := GEMMKind(req.Device)
	mode, why := gemmMode(req.Variant, kind)
	if why != "" {
		res.Status, res.Message = result.StatusUnsupported, why
		return res, nil
	}
	if kind != "" {
		mode.Cold, mode.Graph = req.Mode.ColdCache, req.Mode.CUDAGraph
		t, err := gpugemm.TimeShared(ctx, kind, spec, cfg.Warmup, cfg.Repeats, 1, mode)
		if err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("run %s gemm: %w", backendName, ctx.Err())
			}
			res.Status, res.Message = result.StatusFailed, "gemm on the GPU: "+err.Error()
			return res, nil
		}
		res.Device, res.Env.Timing = t.Device, t.Timing
		res.Env.Versions[libraryKey(t.Library)] = t.Library
		res.Status, res.SamplesMs, res.CompileMs, res.PeakMemoryBytes = result.StatusOK, t.SamplesMs, t.CompileMs, t.PeakMemoryBytes
		return res, nil
	}
	res.Device = host.CPUDevice()
	if st, msg := host.Fits(gemmHostBytes(spec)); st != result.StatusOK {
		res.Status, res.Message = st, "gemm on the CPU "+msg
		return res, nil
	}
	a, b := gemmInputs(spec)
	res.PeakMemoryBytes = int64(len(a)+len(b)+spec.Batch*spec.M*spec.N) * 4
	call := func() error {
		_, err := cpu.GEMMDtype(spec.Dtype, spec.Batch, spec.M, spec.N, spec.K, spec.TransA, spec.TransB, a, b)
		return err
	}
	return timeOnCPU(ctx, req, res, "gemm", call)
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

func ExportGEMM(ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
	spec := gemmSpec(req.Config)
	kind := GEMMKind(req.Device)
	if kind == "" {
		if st, msg := host.Fits(gemmHostBytes(spec)); st != result.StatusOK {
			resp.Status, resp.Message = st, "gemm on the CPU "+msg
			return resp, nil
		}
	}
	in, err := tensorfile.Read(req.InputsPath)
	if err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", backendName, err)
	}
	a, err := floats(in, "a", spec.Batch*spec.M*spec.K)
	if err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", backendName, err)
	}
	b, err := floats(in, "b", spec.Batch*spec.K*spec.N)
	if err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", backendName, err)
	}
	var c []float32
	mode, why := gemmMode(req.Variant, kind)
	if why != "" {
		resp.Status, resp.Message = result.StatusUnsupported, why
		return resp, nil
	}
	if kind != "" {
		c, err = gpugemm.ExportSharedWith(ctx, kind, spec, a, b, mode)
		resp.Device = gpu.SharedInfoOf(kind)
	} else {
		resp.Device = host.CPUDevice()
		c, err = cpu.GEMMDtype(spec.Dtype, spec.Batch, spec.M, spec.N, spec.K, spec.TransA, spec.TransB, a, b)
	}
	if err != nil {
		resp.Status, resp.Message = result.StatusFailed, "gemm: "+err.Error()
		return resp, nil
	}
	out := tensorfile.F32([]int{spec.Batch, spec.M, spec.N}, c)
	if err := tensorfile.Write(req.OutputPath, map[string]tensorfile.Tensor{"c": out}); err != nil {
		return resp, fmt.Errorf("export %s gemm: %w", backendName, err)
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
