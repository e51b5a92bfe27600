package ttt

import "github.com/xbench/xbench/harness/workload"

// Spec constants of the initialisation and the inner MLP (docs/workloads/ttt.md).
const (
	InitStd           = 0.02 // std of a "normal" parameter
	InnerMLPExpansion = 4    // the inner MLP's hidden width is 4f
)

// SizeAliases are other accepted spellings of a model size.
var SizeAliases = map[string]string{"1.3b": "1b"}

// SpecFacts are TTT's facts for the catalog (workload.Factser): what every
// backend builds its model from.
type SpecFacts struct {
	Sizes             []SizeFacts        `json:"sizes"`
	SizeAliases       map[string]string  `json:"size_aliases"`
	NormEps           float64            `json:"norm_eps"`
	RopeTheta         float64            `json:"rope_theta"`
	ConvWidth         int                `json:"conv_width"`
	InitStd           float64            `json:"init_std"`
	InnerMLPExpansion int                `json:"inner_mlp_expansion"`
	BaseLR            map[string]float64 `json:"base_lr"`
	GradPrefix        string             `json:"grad_prefix"`
}

// SizeFacts is one row of the size table.
type SizeFacts struct {
	Name    string `json:"name"`
	Hidden  int    `json:"hidden"`
	Layers  int    `json:"layers"`
	Heads   int    `json:"heads"`
	HeadDim int    `json:"head_dim"`
	MLP     int    `json:"mlp"`
	Vocab   int    `json:"vocab"`
}

var _ workload.Factser = Workload{}

// Facts implements workload.Factser.
func (Workload) Facts() any {
	f := SpecFacts{SizeAliases: SizeAliases, NormEps: NormEps, RopeTheta: RopeTheta, ConvWidth: ConvWidth,
		InitStd: InitStd, InnerMLPExpansion: InnerMLPExpansion, GradPrefix: GradPrefix, BaseLR: map[string]float64{}}
	for _, s := range sizes {
		f.Sizes = append(f.Sizes, SizeFacts(s))
	}
	for _, t := range []string{"linear", "mlp"} {
		f.BaseLR[t] = BaseLR(t)
	}
	return f
}
