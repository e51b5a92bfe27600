package ttt

import "fmt"

// Param is one named tensor of the model with its shape and its default
// initialisation: "normal" is N(0, 0.02), "ones" and "zeros" are constant.
type Param struct {
	Name  string
	Shape []int
	Init  string
}

// Elements is the product of the shape.
func (p Param) Elements() int {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	return n
}

// Initialisations a Param can name.
const (
	InitNormal = "normal"
	InitOnes   = "ones"
	InitZeros  = "zeros"
)

// innerHidden is the inner model's hidden width: f for linear, 4f for mlp.
func innerHidden(s Size, tttType string) int {
	if tttType == "mlp" {
		return InnerMLPExpansion * s.HeadDim
	}
	return s.HeadDim
}

// Params lists every parameter of the model in the spec's order: embed, each
// layer's tensors, final_norm. backbone "mamba" adds the conv block, the
// shared-QK convolutions and the output gate, and drops wk. An unknown
// backbone is treated as transformer.
func Params(s Size, tttType string, miniBatch int, backbone string) []Param {
	C, I := s.Hidden, s.MLP
	out := []Param{{"embed", []int{s.Vocab, C}, InitNormal}}
	for l := 0; l < s.Layers; l++ {
		p := func(name string, init string, shape ...int) {
			out = append(out, Param{fmt.Sprintf("layers.%d.%s", l, name), shape, init})
		}
		if backbone == "mamba" {
			p("conv_norm", InitOnes, C)
			p("conv_w", InitNormal, C, ConvWidth)
			p("conv_b", InitZeros, C)
		}
		p("ttt_norm", InitOnes, C)
		p("ttt.wq", InitNormal, C, C)
		if backbone != "mamba" {
			p("ttt.wk", InitNormal, C, C)
		}
		p("ttt.wv", InitNormal, C, C)
		p("ttt.wo", InitNormal, C, C)
		if backbone == "mamba" {
			p("ttt.wg", InitNormal, C, C)
			p("ttt.conv_q_w", InitNormal, C, ConvWidth)
			p("ttt.conv_q_b", InitZeros, C)
			p("ttt.conv_k_w", InitNormal, C, ConvWidth)
			p("ttt.conv_k_b", InitZeros, C)
		}
		p("ttt.lr_w", InitNormal, s.Heads, C)
		p("ttt.lr_b", InitZeros, s.Heads)
		for _, ip := range innerParams(s, tttType, miniBatch) {
			p("ttt."+ip.Name, ip.Init, ip.Shape...)
		}
		p("ttt.post_norm_w", InitOnes, C)
		p("ttt.post_norm_b", InitZeros, C)
		p("mlp_norm", InitOnes, C)
		p("mlp.w_gate", InitNormal, C, I)
		p("mlp.w_up", InitNormal, C, I)
		p("mlp.w_down", InitNormal, I, C)
	}
	return append(out, Param{"final_norm", []int{C}, InitOnes})
}

// innerParams are one layer's inner-model tensors, without the layer prefix.
func innerParams(s Size, tttType string, miniBatch int) []Param {
	nh, f, h := s.Heads, s.HeadDim, innerHidden(s, tttType)
	ps := []Param{
		{"tok_delta", []int{miniBatch}, InitZeros},
		{"ln_w", []int{nh, f}, InitOnes},
		{"ln_b", []int{nh, f}, InitZeros},
		{"W1", []int{nh, f, h}, InitNormal},
		{"b1", []int{nh, h}, InitZeros},
	}
	if tttType == "mlp" {
		ps = append(ps, Param{"W2", []int{nh, h, f}, InitNormal}, Param{"b2", []int{nh, f}, InitZeros})
	}
	return ps
}

// InnerParams are layer 0's inner-model parameters under their full names
// (layers.0.ttt.W1, ...): what an inner-only run reads.
func InnerParams(s Size, tttType string, miniBatch int) []Param {
	ps := innerParams(s, tttType, miniBatch)
	for i := range ps {
		ps[i].Name = "layers.0.ttt." + ps[i].Name
	}
	return ps
}

// NumParams counts the model's parameters; the tied embedding counts once.
func NumParams(s Size, tttType string, miniBatch int, backbone string) int64 {
	return countParams(Params(s, tttType, miniBatch, backbone))
}

// NumInnerParams counts layer 0's inner-model parameters.
func NumInnerParams(s Size, tttType string, miniBatch int) int64 {
	return countParams(InnerParams(s, tttType, miniBatch))
}

func countParams(ps []Param) int64 {
	var n int64
	for _, p := range ps {
		n += int64(p.Elements())
	}
	return n
}
