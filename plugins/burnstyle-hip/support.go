package burnstylehip

import (
	"fmt"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/gemm"
	"github.com/xbench/xbench/harness/workload/scan"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// devices lists the registered engines' devices.
func (n *Native) devices() []string {
	var out []string
	for _, d := range devicePreference {
		if _, ok := n.engines[d]; ok {
			out = append(out, d)
		}
	}
	return out
}

// capabilities is what the backend declares; devices come from the engines
// table, so registering an engine is the one edit that adds a device.
func (n *Native) capabilities() backend.Capabilities {
	devices := []string{}
	for _, d := range devicePreference {
		if _, ok := n.engines[d]; ok {
			devices = append(devices, d)
		}
	}
	slices.Sort(devices)
	return backend.Capabilities{Workloads: []backend.WorkloadCaps{
		{
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
		},
		{
			// cuBLAS on CUDA, hipBLASLt on ROCm (tf32: its xf32, which
			// only CDNA3 has; elsewhere the library answers), the blocked
			// pure-Go kernel on the CPU (where tf32 is computed as float32,
			// which its definition allows).
			Workload: gemm.Name,
			Phases:   []string{workload.PhaseForward},
			Devices:  []string{"cpu", "cuda", "rocm"},
			Values:   map[string][]string{"dtype": {"float32", "tf32", "bfloat16", "float16"}},
		},
		{
			// Our FlashAttention-2-style kernel on CUDA (head_dim up to 256),
			// pure Go on the CPU, which rounds bfloat16/float16 inputs to the
			// dtype, computes in float32 and rounds out to the dtype.
			// Backward and both: FlashAttention-2's backward, our kernels on
			// CUDA (the forward that saves the row statistics is mma.sync or
			// CUDA cores, never wgmma), pure Go on the CPU.
			Workload: attentionName,
			Phases:   []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseBoth},
			Devices:  []string{"cpu", "cuda"},
			Values:   map[string][]string{"dtype": {"float32", "bfloat16", "float16"}},
			Max:      map[string]int64{"head_dim": 256},
		},
		{
			// Pure Go on the CPU, every semiring and phase; our kernel on
			// CUDA for the log and max forward (unsupported answers the rest).
			Workload: scan.Name,
			Phases:   []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseBoth},
			Devices:  []string{"cpu", "cuda"},
			Values:   map[string][]string{"dtype": {"float32", "float64"}, "semiring": {"log", "max", "entropy"}},
		},
	}}
}

// unsupported returns "" when the backend declares support for the request,
// else a message naming the first thing it lacks and what it allows.
func (n *Native) unsupported(variant, device string, cfg result.Config) string {
	if variant != "" {
		var names []string
		for _, v := range variants {
			if v.Name == variant {
				return v.Capabilities.Unsupported(device, cfg)
			}
			names = append(names, v.Name)
		}
		return fmt.Sprintf("variant %q is not supported (burnstyle-hip's variants: %s)", variant, strings.Join(names, ", "))
	}
	if device == "rocm" {
		if why := rocmUnsupported(cfg); why != "" {
			return why
		}
	}
	if cfg.Workload == scan.Name && device == "cuda" && (cfg.Phase != workload.PhaseForward || cfg.Get("semiring") == "entropy") {
		return fmt.Sprintf("%s %s on cuda is not supported: burnstyle-hip's GPU scan kernel is the log and max forward (the CPU runs every semiring and phase)",
			cfg.Get("semiring"), cfg.Phase)
	}
	return n.capabilities().Unsupported(device, cfg)
}

// backboneOf treats an empty backbone as the spec's default.
func backboneOf(cfg ttt.Config) string {
	if cfg.Backbone == "" {
		return "transformer"
	}
	return cfg.Backbone
}

// invalid reports a configuration no backend could run: a broken request,
// answered with an error rather than an unsupported result.
func invalid(cfg ttt.Config) error {
	switch {
	case cfg.Batch < 1:
		return fmt.Errorf("invalid config: batch %d < 1", cfg.Batch)
	case cfg.SeqLen < 1:
		return fmt.Errorf("invalid config: seq_len %d < 1", cfg.SeqLen)
	case cfg.MiniBatch < 1:
		return fmt.Errorf("invalid config: mini_batch %d < 1", cfg.MiniBatch)
	case cfg.SeqLen%cfg.MiniBatch != 0:
		return fmt.Errorf("invalid config: seq_len %d is not a multiple of mini_batch %d", cfg.SeqLen, cfg.MiniBatch)
	case cfg.Repeats < 1:
		return fmt.Errorf("invalid config: repeats %d < 1", cfg.Repeats)
	case cfg.Warmup < 0:
		return fmt.Errorf("invalid config: warmup %d < 0", cfg.Warmup)
	}
	return nil
}

// candidates resolves the requested device to the engines that may run it:
// one for a named device, every registered one in devicePreference order
// for "auto" (or empty). The message is non-empty when none starts.
func (n *Native) candidates(device string) ([]engine, string) {
	allowed := strings.Join(append(n.devices(), "auto"), ", ")
	if device == "" || device == "auto" {
		var out []engine
		for _, d := range devicePreference {
			if mk, ok := n.engines[d]; ok {
				if e, err := mk(); err == nil {
					out = append(out, e)
				}
			}
		}
		if len(out) == 0 {
			return nil, "no device is available (allowed: " + allowed + ")"
		}
		return out, ""
	}
	mk, ok := n.engines[device]
	if !ok {
		return nil, fmt.Sprintf("device %q is not supported (allowed: %s)", device, allowed)
	}
	e, err := mk()
	if err != nil {
		return nil, fmt.Sprintf("device %q is not available: %v", device, err)
	}
	return []engine{e}, ""
}

// rocmUnsupported is why a request cannot run on rocm, or "". Every kernel
// compiles for gfx90a, gfx1030 and gfx942 (TestHIPRTC) and the AMD paths pass
// on the emulator (gpu.TestEmuHIP); what is missing is named here. ttt is
// the one workload declared on rocm (its devices are the engines').
func rocmUnsupported(cfg result.Config) string {
	switch {
	case cfg.Workload == attentionName, cfg.Workload == scan.Name:
		return fmt.Sprintf("%s on rocm is not supported: its kernel compiles for gfx90a and gfx1030 and passes on the emulator, "+
			"but burnstyle-hip runs it on the cuda device only", cfg.Workload)
	case cfg.Workload == ttt.Name && cfg.Phase == workload.PhaseBackward:
		return "the ttt training step on rocm is not supported: its products need a BLAS library, and the ttt engine uses none on rocm yet " +
			"(the forward runs on the portable GEMM kernels; hipBLASLt and rocBLAS are bound for the gemm workload only)"
	}
	return ""
}
