package attention

import (
	"strconv"

	"github.com/xbench/xbench/harness/workload"
)

// suiteTokens is the tokens of one call in the llm and grid suites: batch ·
// seq_len = 16384, so every length does comparable work per token and the
// longest runs at batch 1.
const suiteTokens = 16384

// suiteLens are the seq_len values of the llm and grid suites.
var suiteLens = []int{512, 1024, 2048, 4096, 8192, 16384}

// llmModel is one decoder's attention heads: the query heads, the key/value
// heads (fewer for GQA) and the head width.
type llmModel struct {
	name                    string
	heads, kvHeads, headDim int
}

// llmModels: GPT-2 small is also TTT 125m's attention; Llama-3-70B has
// Llama-2-70B's heads and Mistral-7B Llama-3-8B's. They stay listed so the
// suite says which models it covers, and deduplication drops the repeats.
var llmModels = []llmModel{
	{"gpt-2-small", 12, 12, 64},
	{"gpt-3-175b", 96, 96, 128},
	{"llama-2-7b", 32, 32, 128},
	{"llama-2-70b", 64, 8, 128},
	{"llama-3-8b", 32, 8, 128},
	{"llama-3-70b", 64, 8, 128},
	{"mistral-7b", 32, 8, 128},
	{"gemma-7b", 16, 16, 256},
}

func (Workload) SuiteHelp() string {
	return "llm (causal self-attention of 8 LLMs, 512 to 16384 tokens), grid (seq_len 512-16384 x head_dim 64/128/256, width 2048), " +
		"or a CSV file of batch,heads,kv_heads,seq_len,kv_len,head_dim[,causal] rows"
}

// Suite expands --shapes SPEC. llm sets every parameter but dtype (its
// shapes are causal self-attention by definition); grid leaves causal and
// dtype to the flags; a CSV row sets its columns.
func (Workload) Suite(spec string) ([]map[string]string, error) {
	switch spec {
	case "llm":
		return llmSuite(), nil
	case "grid":
		return gridSuite(), nil
	}
	return workload.CSVSuite(Workload{}, spec, csvColumns, 6, "llm, grid")
}

func shape(batch, heads, kvHeads, seqLen, headDim int) map[string]string {
	return map[string]string{"batch": strconv.Itoa(batch), "heads": strconv.Itoa(heads), "kv_heads": strconv.Itoa(kvHeads),
		"seq_len": strconv.Itoa(seqLen), "kv_len": "0", "head_dim": strconv.Itoa(headDim)}
}

// llmSuite is each model at each length, batch suiteTokens/seq_len, causal,
// in model order, identical head configurations once.
func llmSuite() []map[string]string {
	var out []map[string]string
	seen := map[[3]int]bool{}
	for _, m := range llmModels {
		key := [3]int{m.heads, m.kvHeads, m.headDim}
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, l := range suiteLens {
			sh := shape(suiteTokens/l, m.heads, m.kvHeads, l, m.headDim)
			sh["causal"] = "true"
			out = append(out, sh)
		}
	}
	return out
}

// gridSuite is the FlashAttention papers' benchmark: a model width of 2048
// (heads = 2048/head_dim), 16k tokens a call, every length at each head size.
func gridSuite() []map[string]string {
	var out []map[string]string
	for _, d := range []int{64, 128, 256} {
		for _, l := range suiteLens {
			out = append(out, shape(suiteTokens/l, 2048/d, 0, l, d))
		}
	}
	return out
}

// csvColumns are the columns of a CSV suite, in order; causal is optional.
var csvColumns = []string{"batch", "heads", "kv_heads", "seq_len", "kv_len", "head_dim", "causal"}
