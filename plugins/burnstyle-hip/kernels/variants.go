package kernels

import (
	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/gemm"
	gpugemm "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"
)

// CublasLtVariant runs the gemm workload through cuBLASLt instead of cuBLAS:
// the heuristic's top algorithms are timed on the device before the first
// call and the fastest is used and recorded (env.timing names it), the
// analogue of what hipBLASLt-based ROCm suites do. CUDA only: on rocm the
// plain gemm is hipBLASLt's, the same search.
var CublasLtVariant = backend.Variant{
	Name:        "cublaslt",
	Description: "gemm through cuBLASLt with the fastest of its heuristic's top algorithms, timed on the device and recorded (cuda only)",
	Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{{
		Workload: gemm.Name,
		Phases:   []string{workload.PhaseForward},
		Devices:  []string{"cuda"},
		Values:   map[string][]string{"dtype": {"float32", "tf32", "bfloat16", "float16"}},
	}}},
}

// RocblasVariant runs the gemm workload on rocm through rocBLAS
// (rocblas_gemm_strided_batched_ex) instead of hipBLASLt: the seed's ROCm
// suites time both. tf32 is not declared: rocBLAS has xf32 only as a math
// mode of gfx942, which is not bound.
var RocblasVariant = backend.Variant{
	Name:        "rocblas",
	Description: "gemm through rocBLAS's rocblas_gemm_strided_batched_ex instead of hipBLASLt (rocm only)",
	Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{{
		Workload: gemm.Name,
		Phases:   []string{workload.PhaseForward},
		Devices:  []string{"rocm"},
		Values:   map[string][]string{"dtype": {"float32", "bfloat16", "float16"}},
	}}},
}

// gpuReason is why the GPU path of kind is not available, for messages.
func gpuReason(kind string) string {
	if err := gpugemm.Available(kind); err != nil {
		return err.Error()
	}
	return "the request did not ask for it"
}
