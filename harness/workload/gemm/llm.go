package gemm

// llmModel is one model's dense layer widths: what its projection and MLP
// GEMMs multiply. kvWidth is the width of K and of V each: the hidden size
// for multi-head attention, heads_kv·head_dim for grouped-query attention.
type llmModel struct {
	name                 string
	hidden, intermediate int
	kvWidth              int
	// gated MLPs (SwiGLU) compute gate and up from the same input; fused,
	// that is one GEMM of twice the intermediate width.
	gated bool
}

// llmModels are the TTT sizes of this repository and common open LLMs.
// Mistral-7B has Llama-3-8B's shapes exactly; it stays listed so the suite
// says which models it covers, and deduplication drops the repeats.
var llmModels = []llmModel{
	{name: "ttt-125m", hidden: 768, intermediate: 2048, kvWidth: 768, gated: true},
	{name: "ttt-350m", hidden: 1024, intermediate: 2736, kvWidth: 1024, gated: true},
	{name: "ttt-760m", hidden: 1536, intermediate: 4096, kvWidth: 1536, gated: true},
	{name: "ttt-1b", hidden: 2048, intermediate: 5504, kvWidth: 2048, gated: true},
	{name: "llama-2-7b", hidden: 4096, intermediate: 11008, kvWidth: 4096, gated: true},
	{name: "llama-3-8b", hidden: 4096, intermediate: 14336, kvWidth: 1024, gated: true},
	{name: "mistral-7b", hidden: 4096, intermediate: 14336, kvWidth: 1024, gated: true},
	{name: "gpt-2-small", hidden: 768, intermediate: 3072, kvWidth: 768, gated: false},
}

// llmTokens are the token counts (m): decoding one token, small and large
// prefill batches.
var llmTokens = []int{1, 16, 128, 512, 1024, 2048, 4096, 8192}

// llmShape is one GEMM of the llm suite; layout is always "nt".
type llmShape struct{ m, n, k int }

// llmShapes lists, per model, the fused QKV projection, the output
// projection, MLP up (gate and up fused when gated) and MLP down, each at
// every token count, without repeats, in first-seen order. In each, A is
// the activations [tokens, in] and B the weight stored [out, in] as
// frameworks store it, hence layout "nt": n = out, k = in.
func llmShapes() []llmShape {
	var out []llmShape
	seen := map[llmShape]bool{}
	for _, md := range llmModels {
		up := md.intermediate
		if md.gated {
			up *= 2
		}
		gemms := [][2]int{ // {n, k}
			{md.hidden + 2*md.kvWidth, md.hidden}, // QKV projection
			{md.hidden, md.hidden},                // output projection
			{up, md.hidden},                       // MLP up
			{md.hidden, md.intermediate},          // MLP down
		}
		for _, g := range gemms {
			for _, t := range llmTokens {
				s := llmShape{m: t, n: g[0], k: g[1]}
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out
}
