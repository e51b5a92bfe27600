package burnstylehip

// Timing modes (docs/protocol.md, "Timing modes"): cold-cache for GEMM and
// attention, on the GPU through the gpu.Calls the kernels are timed with,
// on the CPU through a host buffer larger than the last-level cache
// (kernels/cputime.go); CUDA graphs for the GEMM on cuda (the TTT forward
// always replays one). Which workload has which mode is its entry in
// workloadTable.

import (
	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/plugins/burnstyle-hip/kernels"
)

// modeUnsupported says why this backend cannot time req in its mode, or "".
func modeUnsupported(req backend.RunRequest) string {
	w, _ := workloadOf(req.Config.Workload)
	switch {
	case req.Mode.CUDAGraph && (!w.cudaGraph || kernels.GEMMKind(req.Device) == ""):
		return Name + ": --cuda-graph is implemented for the gemm workload on a GPU only (its library call captured once as a CUDA or HIP graph, replays timed)"
	case req.Mode.ColdCache && !w.coldCache:
		return Name + ": --cold-cache is implemented for the gemm and attention workloads only (workload " + req.Config.Workload + ")"
	}
	return ""
}
