// Package ttt is the TTT workload of docs/workloads/ttt.md as data:
// model sizes, parameter names and shapes, default and verification weights,
// random inputs and a FLOP count. Every backend and the harness share it, so
// a name or shape is defined once.
package ttt

import (
	"fmt"
	"strings"
)

// Size is one row of the spec's size table.
type Size struct {
	Name    string
	Hidden  int // C
	Layers  int
	Heads   int // nh
	HeadDim int // f = C / nh
	MLP     int // I, the SwiGLU width
	Vocab   int // V
}

// Spec constants shared by every backend.
const (
	NormEps   = 1e-6    // RMSNorm and LayerNorm
	RopeTheta = 10000.0 // RoPE base
	ConvWidth = 4       // mamba backbone's causal convolutions
)

var sizes = []Size{
	{Name: "tiny", Hidden: 64, Layers: 2, Heads: 4, HeadDim: 16, MLP: 128, Vocab: 256},
	{Name: "125m", Hidden: 768, Layers: 12, Heads: 12, HeadDim: 64, MLP: 2048, Vocab: 32000},
	{Name: "350m", Hidden: 1024, Layers: 24, Heads: 16, HeadDim: 64, MLP: 2736, Vocab: 32000},
	{Name: "760m", Hidden: 1536, Layers: 24, Heads: 16, HeadDim: 96, MLP: 4096, Vocab: 32000},
	{Name: "1b", Hidden: 2048, Layers: 24, Heads: 32, HeadDim: 64, MLP: 5504, Vocab: 32000},
}

// SizeNames lists the canonical size names, smallest first.
func SizeNames() []string {
	out := make([]string, len(sizes))
	for i, s := range sizes {
		out[i] = s.Name
	}
	return out
}

// LookupSize finds a size by name; "1.3b" is an alias of "1b".
func LookupSize(name string) (Size, error) {
	key := strings.ToLower(name)
	if canon, ok := SizeAliases[key]; ok {
		key = canon
	}
	for _, s := range sizes {
		if s.Name == key {
			return s, nil
		}
	}
	return Size{}, fmt.Errorf("unknown model size %q (allowed: %s, 1.3b)", name, strings.Join(SizeNames(), ", "))
}

// BaseLR is the inner model's base learning rate: 1.0 for linear, 0.1 for
// mlp (0 for an unknown type).
func BaseLR(tttType string) float64 {
	switch tttType {
	case "linear":
		return 1.0
	case "mlp":
		return 0.1
	}
	return 0
}
