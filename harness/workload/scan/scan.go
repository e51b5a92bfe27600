// Package scan is the scan workload of docs/workloads/scan.md: the streaming
// semi-Markov CRF of flash-semicrf, under the log (partition), max (Viterbi)
// and entropy semirings, forward and backward. This package is the spec as
// code: parameters, the rules between them, the cost model, the fixtures,
// the float64 reference with its gradients, the grid suite and its buckets.
package scan

import (
	"fmt"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// Workload is the scan workload. It holds no state.
type Workload struct{}

var (
	_ workload.Workload    = Workload{}
	_ workload.Suiter      = Workload{}
	_ workload.Smaller     = Workload{}
	_ workload.MultiOutput = Workload{}
	_ workload.Bucketer    = Workload{}
)

// Name is the workload's name.
const Name = "scan"

// Limits of the parameters; MaxElements bounds cum_scores (and its
// gradient), as in GEMM and attention.
const (
	MaxT        = 1 << 20
	MaxK        = 1 << 10
	MaxC        = 1 << 10
	MaxBatch    = 1 << 16
	MaxElements = int64(1) << 34
)

// Semirings, in declaration order; log is the default.
const (
	SemiringLog     = "log"
	SemiringMax     = "max"
	SemiringEntropy = "entropy"
)

func (Workload) Name() string { return Name }

func (Workload) Description() string {
	return "semi-Markov CRF scan (flash-semicrf's streaming API): partition, Viterbi score or entropy, forward and backward"
}

// Params: T, K and C are named as in flash-semicrf and the papers.
func (Workload) Params() []workload.Param {
	size := func(name, def string, max int64, help string) workload.Param {
		return workload.Param{Name: name, Kind: workload.Int, Default: def, Min: 1, Max: max, Help: help, SizeAxis: true, Scale: true}
	}
	length := func(p workload.Param) workload.Param { p.Length = true; return p }
	return []workload.Param{
		length(size("T", "1024", MaxT, "sequence length (positions)")),
		size("K", "8", MaxK, "longest segment duration (K <= T)"),
		size("C", "8", MaxC, "labels"),
		size("batch", "4", MaxBatch, "sequences; row b has length T - (b·T) // (2·batch)"),
		{Name: "semiring", Kind: workload.Enum, Default: SemiringLog, Allowed: []string{SemiringLog, SemiringMax, SemiringEntropy},
			Help: "log: log partition; max: Viterbi score; entropy: entropy of the segmentation distribution (forward only)"},
		{Name: "dtype", Kind: workload.Enum, Default: "float32", Allowed: DtypeNames(), Aliases: map[string]string{"fp32": "float32", "fp64": "float64", "double": "float64"},
			Help: "every input, the arithmetic and every output"},
	}
}

// Phases: forward (the default), backward (the gradients of Σ out, after a
// forward made before timing) and both.
func (Workload) Phases() []string {
	return []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseBoth}
}

// Shape is a configuration's sizes.
type Shape struct{ T, K, C, Batch int }

// ShapeOf reads a resolved configuration.
func ShapeOf(cfg result.Config) Shape {
	return Shape{T: cfg.Int("T"), K: cfg.Int("K"), C: cfg.Int("C"), Batch: cfg.Int("batch")}
}

// Lengths are the spec's row lengths, T - (b·T) // (2·batch): the full
// length for row 0, down to about T/2, so masking of finished rows runs.
// Fixtures and every backend's timing inputs use them.
func (s Shape) Lengths() []int64 {
	out := make([]int64, s.Batch)
	for b := range out {
		out[b] = int64(s.T) - int64(b)*int64(s.T)/int64(2*s.Batch)
	}
	return out
}

// Positions is Σ_b lengths[b]: the positions one call computes.
func (s Shape) Positions() float64 {
	var n float64
	for _, l := range s.Lengths() {
		n += float64(l)
	}
	return n
}

// backwardPhase says whether cfg's phase computes the gradients.
func backwardPhase(cfg result.Config) bool {
	return cfg.Phase == workload.PhaseBackward || cfg.Phase == workload.PhaseBoth
}

// Check holds the rules between parameters: K <= T, entropy forward only,
// and cum_scores of at most MaxElements.
func (Workload) Check(cfg result.Config) error {
	s := ShapeOf(cfg)
	if s.K > s.T {
		return &workload.ValueError{Flag: "--K --T", Value: fmt.Sprintf("%d %d", s.K, s.T),
			Allowed: "K <= T (no segment is longer than the sequence)"}
	}
	if cfg.Get("semiring") == SemiringEntropy && backwardPhase(cfg) {
		return &workload.ValueError{Flag: "--semiring --phase", Value: fmt.Sprintf("entropy %s", cfg.Phase),
			Allowed: "semiring entropy with phase forward only (log and max have backward and both)"}
	}
	if e, ok := workload.MulInt64(s.Batch, s.T+1, s.C); !ok || e > MaxElements {
		return &workload.ValueError{Flag: "--batch --T --C", Value: fmt.Sprintf("%d %d %d", s.Batch, s.T, s.C),
			Allowed: fmt.Sprintf("cum_scores holds batch·(T+1)·C = %s elements; at most %d (2^34)", workload.CountText(e, ok), MaxElements)}
	}
	if _, ok := workload.MulInt64(s.Batch, s.T, s.K, s.C, s.C); !ok {
		return &workload.ValueError{Flag: "--batch --T --K --C", Value: fmt.Sprintf("%d %d %d %d", s.Batch, s.T, s.K, s.C),
			Allowed: "batch·T·K·C² below 2^63"}
	}
	return nil
}

// Label is "b4 T1024 K8 C6 log float32".
func (Workload) Label(cfg result.Config) string {
	s := ShapeOf(cfg)
	return fmt.Sprintf("b%d T%d K%d C%d %s %s", s.Batch, s.T, s.K, s.C, cfg.Get("semiring"), cfg.Dtype())
}

// SmallDefaults implements workload.Smaller: sizes a float64 reference and
// Triton's interpreter finish in well under a second, with C not a power of
// two (tile tails), K > 2 (flash-semicrf's general path) and three rows of
// different lengths.
func (Workload) SmallDefaults() map[string]string {
	return map[string]string{"T": "20", "K": "4", "C": "3", "batch": "3"}
}
