// Package profile turns a backend's profile (backend.ProfileReport) into
// what `xbench profile` prints: the top kernels with a category each and
// every category's share. The categories are decided here, once, in Go, so
// torch's, XLA's and the native backend's names land in the same buckets.
package profile

import (
	"strings"
	"unicode"
)

// Category is what kind of work a kernel does.
type Category string

const (
	GEMM        Category = "GEMM"
	Attention   Category = "attention"
	Elementwise Category = "elementwise/norm"
	Copies      Category = "copies"
	Other       Category = "other"
	// Launch is not a kernel's category: it is the row for the wall time
	// of the profiled calls that no kernel's device time accounts for.
	Launch Category = "launch overhead"
)

// Categories is the order categories are printed in.
var Categories = []Category{GEMM, Attention, Elementwise, Copies, Other, Launch}

// rule is one category's evidence: a substring of the lower-cased name, or
// a whole word of it (words split at anything not a letter or digit, so
// "aten::mm" has the word "mm" but "summary" has not).
type rule struct {
	cat        Category
	substrings []string
	words      []string
}

// rules are tried in order and the first match wins, which is why
// attention comes first (fmha_cutlassF is attention, not a cutlass GEMM),
// GEMM before elementwise (gemm_fusion_dot, triton_tem_fused_mm are
// matmuls that XLA and inductor call fusions) and copies before
// elementwise (a transpose fusion moves data).
var rules = []rule{
	// XLA's CPU backend hands dots, reductions and elementwise chains alike
	// to YNNPACK as "ynn_fusion.N": the name does not say which, so it is
	// not guessed.
	{Other, []string{"ynn_fusion"}, nil},
	// The TTT inner loop is the model's attention: the sequence mixer
	// that sits where softmax attention sits in a transformer. Its fused
	// kernels (triton ttt_linear_kernel, the native "inner" phase) go here.
	{Attention, []string{"flash", "attention", "sdpa", "fmha", "ttt_"}, []string{"attn", "inner", "mha"}},
	{GEMM, []string{"gemm", "matmul", "cutlass", "cublas", "xmma", "wgmma", "nvjet", "gemv"},
		[]string{"mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "dot", "linear", "einsum", "conv", "convolution"}},
	{Copies, []string{"memcpy", "memset", "transpose", "concatenate", "index_select", "embedding", "dynamic-update-slice", "dynamic-slice"},
		[]string{"copy", "cat", "clone", "contiguous", "to", "gather", "scatter", "embed", "slice", "pad", "fill", "zero", "zeros", "permute", "bitcast", "stack"}},
	{Elementwise, []string{"elementwise", "vectorized", "layer_norm", "layernorm", "rms", "softmax", "reduce", "fusion", "fused", "triton_poi", "triton_red", "triton_per"},
		[]string{"norm", "add", "sub", "mul", "div", "neg", "exp", "log", "pow", "sqrt", "rsqrt", "tanh", "sigmoid", "silu", "gelu", "relu", "swiglu",
			"erf", "abs", "sum", "mean", "max", "min", "maximum", "minimum", "clamp", "where", "select", "compare", "convert", "broadcast",
			"multiply", "subtract", "divide", "exponential", "negate", "rope", "prep", "residual", "scale", "lerp", "sign", "cos", "sin", "cumsum"}},
}

// Classify says what kind of work a kernel (or op, or phase) named name is.
func Classify(name string) Category {
	lower := strings.ToLower(name)
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words[w] = true
	}
	for _, r := range rules {
		for _, s := range r.substrings {
			if strings.Contains(lower, s) {
				return r.cat
			}
		}
		for _, w := range r.words {
			if words[w] {
				return r.cat
			}
		}
	}
	return Other
}
