package burnstylehip

import (
	"context"
	"fmt"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/attention"
	"github.com/xbench/xbench/harness/workload/gemm"
	"github.com/xbench/xbench/harness/workload/scan"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/kernels"
)

// workloadEntry is everything the backend does for one workload, in one
// place: what it declares, how it times and exports a request, which
// timing modes it implements and whether it profiles. Info, Run, Export and
// Profile read this table instead of each switching on the workload.
type workloadEntry struct {
	name string
	// caps declares the workload; devices are the registered engines'.
	caps   func(devices []string) backend.WorkloadCaps
	run    func(n *Native, ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error)
	export func(n *Native, ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error)
	// coldCache and cudaGraph say which timing modes are implemented
	// (--cuda-graph on a GPU only).
	coldCache, cudaGraph bool
	// noProfile, when set, is why `xbench profile` is not supported.
	noProfile string
	// limits, when set, is why a device the workload declares cannot run
	// cfg, or "". Every kernel compiles for gfx90a, gfx1030 and gfx942
	// (TestHIPRTC) and the AMD paths pass on the emulator (gpu.TestEmuHIP);
	// what rocm lacks is the run path, named here.
	limits func(device string, cfg result.Config) string
}

// rocmRunsCUDAOnly is the limit of a workload whose kernels compile for
// AMD but that burnstyle-hip runs on the cuda device only.
func rocmRunsCUDAOnly(device string, cfg result.Config) string {
	if device != "rocm" {
		return ""
	}
	return fmt.Sprintf("%s on rocm is not supported: its kernel compiles for gfx90a and gfx1030 and passes on the emulator, "+
		"but burnstyle-hip runs it on the cuda device only", cfg.Workload)
}

// variants are the backend's variants, each by its name.
var variants = []backend.Variant{kernels.CublasLtVariant, kernels.RocblasVariant, kernels.MMASyncVariant, kernels.WGMMAOverlapVariant}

var workloadTable = []workloadEntry{
	{
		name: ttt.Name,
		caps: func(devices []string) backend.WorkloadCaps {
			return backend.WorkloadCaps{
				// The training step (backward) and mamba, apart and together,
				// on every engine.
				Workload: ttt.Name,
				Phases:   []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseInnerOnly},
				Devices:  devices,
				Values: map[string][]string{
					ttt.KeyDtype:    {"float32", "bfloat16", "float64"}, // bfloat16 on the GPU engines only
					ttt.KeyTTTType:  {"linear", "mlp"},
					ttt.KeyBackbone: {"transformer", "mamba"},
				},
			}
		},
		run:    (*Native).runTTT,
		export: (*Native).exportTTT,
		limits: func(device string, cfg result.Config) string {
			if device == "rocm" && cfg.Phase == workload.PhaseBackward {
				return "the ttt training step on rocm is not supported: its products need a BLAS library, and the ttt engine uses none on rocm yet " +
					"(the forward runs on the portable GEMM kernels; hipBLASLt and rocBLAS are bound for the gemm workload only)"
			}
			return ""
		},
	},
	{
		name: gemm.Name,
		caps: func([]string) backend.WorkloadCaps {
			return backend.WorkloadCaps{
				// cuBLAS on CUDA, hipBLASLt on ROCm (tf32: its xf32, which
				// only CDNA3 has; elsewhere the library answers), the blocked
				// pure-Go kernel on the CPU (where tf32 is computed as float32,
				// which its definition allows).
				Workload: gemm.Name,
				Phases:   []string{workload.PhaseForward},
				Devices:  []string{"cpu", "cuda", "rocm"},
				Values:   map[string][]string{"dtype": {"float32", "tf32", "bfloat16", "float16"}},
			}
		},
		run: func(_ *Native, ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
			return kernels.RunGEMM(ctx, req, res)
		},
		export: func(_ *Native, ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
			return kernels.ExportGEMM(ctx, req, resp)
		},
		coldCache: true,
		cudaGraph: true,
		noProfile: Name + " profiles the ttt workload only: its gemm is one call of one kernel (cuBLAS, or the blocked Go kernel), which xbench run times as it is",
	},
	{
		name: attention.Name,
		caps: func([]string) backend.WorkloadCaps {
			return backend.WorkloadCaps{
				// Our FlashAttention-2-style kernel on CUDA (head_dim up to 256),
				// pure Go on the CPU, which rounds bfloat16/float16 inputs to the
				// dtype, computes in float32 and rounds out to the dtype.
				// Backward and both: FlashAttention-2's backward, our kernels on
				// CUDA (the forward that saves the row statistics is mma.sync or
				// CUDA cores, never wgmma), pure Go on the CPU.
				Workload: attention.Name,
				Phases:   []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseBoth},
				Devices:  []string{"cpu", "cuda"},
				Values:   map[string][]string{"dtype": {"float32", "bfloat16", "float16"}},
				Max:      map[string]int64{"head_dim": 256},
			}
		},
		run: func(_ *Native, ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
			return kernels.RunAttention(ctx, req, res)
		},
		export: func(_ *Native, ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
			return kernels.ExportAttention(ctx, req, resp)
		},
		coldCache: true,
		noProfile: Name + " profiles the ttt workload only: its attention is one kernel call per pass, which xbench run times as it is",
		limits:    rocmRunsCUDAOnly,
	},
	{
		name: scan.Name,
		caps: func([]string) backend.WorkloadCaps {
			return backend.WorkloadCaps{
				// Pure Go on the CPU, every semiring and phase; our kernel on
				// CUDA for the log and max forward (unsupported answers the rest).
				Workload: scan.Name,
				Phases:   []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseBoth},
				Devices:  []string{"cpu", "cuda"},
				Values:   map[string][]string{"dtype": {"float32", "float64"}, "semiring": {"log", "max", "entropy"}},
			}
		},
		run: func(_ *Native, ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
			return kernels.RunScan(ctx, req, res)
		},
		export: func(_ *Native, ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
			return kernels.ExportScan(ctx, req, resp)
		},
		noProfile: Name + " profiles the ttt workload only: its scan is one kernel call per pass, which xbench run times as it is",
		limits: func(device string, cfg result.Config) string {
			if device == "cuda" && (cfg.Phase != workload.PhaseForward || cfg.Get("semiring") == "entropy") {
				return fmt.Sprintf("%s %s on cuda is not supported: burnstyle-hip's GPU scan kernel is the log and max forward (the CPU runs every semiring and phase)",
					cfg.Get("semiring"), cfg.Phase)
			}
			return rocmRunsCUDAOnly(device, cfg)
		},
	},
}

// workloadOf is the table's entry for a workload the backend declares.
func workloadOf(name string) (workloadEntry, bool) {
	for _, w := range workloadTable {
		if w.name == name {
			return w, true
		}
	}
	return workloadEntry{}, false
}
