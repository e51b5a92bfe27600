package burnstylehip

import (
	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/gemm"
	gpugemm "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/gemm"
)

// cublasLtVariant runs the gemm workload through cuBLASLt instead of cuBLAS:
// the heuristic's top algorithms are timed on the device before the first
// call and the fastest is used and recorded (env.timing names it), the
// analogue of what hipBLASLt-based ROCm suites do. CUDA only: no hipBLASLt
// is bound.
var cublasLtVariant = backend.Variant{
	Name:        "cublaslt",
	Description: "gemm through cuBLASLt with the fastest of its heuristic's top algorithms, timed on the device and recorded (cuda only)",
	Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{{
		Workload: gemm.Name,
		Phases:   []string{workload.PhaseForward},
		Devices:  []string{"cuda"},
		Values:   map[string][]string{"dtype": {"float32", "tf32", "bfloat16", "float16"}},
	}}},
}

// gpuReason is why the CUDA GPU path is not available, for messages.
func gpuReason() string {
	if err := gpugemm.Available(); err != nil {
		return err.Error()
	}
	return "the request did not ask for it (device cpu)"
}
