// Package attention is the attention workload of docs/workloads/attention.md:
// scaled dot-product attention, multi-head with grouped-query attention,
// optionally causal, forward and backward. This package is the spec as code:
// parameters, the rules between them, the cost model, the verification
// fixtures and float64 reference, and the shape suites.
package attention

import (
	"fmt"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// Workload is the attention workload. It holds no state: everything it
// needs is in the configuration.
type Workload struct{}

var (
	_ workload.Workload    = Workload{}
	_ workload.Suiter      = Workload{}
	_ workload.Smaller     = Workload{}
	_ workload.MultiOutput = Workload{}
	_ workload.ColdCacher  = Workload{}
)

// Name is the workload's name.
const Name = "attention"

// Limits of the parameters. Each is small enough that every product of
// them that Check forms is computed without overflow by mulInt64; each
// tensor may hold at most MaxElements (2^34, as in GEMM).
const (
	MaxBatch    = 1 << 16
	MaxHeads    = 1 << 10
	MaxLen      = 1 << 20
	MaxHeadDim  = 256
	MaxElements = int64(1) << 34
)

func (Workload) Name() string { return Name }

func (Workload) Description() string {
	return "scaled dot-product attention (multi-head, GQA, causal), forward and backward, in one dtype"
}

// Params are built on each call, so no caller can change another's slices.
// kv_heads and kv_len are not size axes: their 0 stands for heads and
// seq_len, so their integer order is not the order of the work.
func (Workload) Params() []workload.Param {
	size := func(name, def string, min, max int64, help string) workload.Param {
		return workload.Param{Name: name, Kind: workload.Int, Default: def, Min: min, Max: max, Help: help, SizeAxis: true, Scale: true}
	}
	length := func(p workload.Param) workload.Param { p.Length = true; return p }
	return []workload.Param{
		size("batch", "4", 1, MaxBatch, "independent sequences"),
		size("heads", "32", 1, MaxHeads, "query heads"),
		{Name: "kv_heads", Kind: workload.Int, Default: "0", Min: 0, Max: MaxHeads, Scale: true,
			Help: "key/value heads, dividing heads (fewer = GQA; 0 = heads)"},
		length(size("seq_len", "4096", 1, MaxLen, "query positions")),
		{Name: "kv_len", Kind: workload.Int, Default: "0", Min: 0, Max: MaxLen, Scale: true,
			Help: "key/value positions (0 = seq_len)"},
		size("head_dim", "128", 1, MaxHeadDim, "width of one head (suites use 64, 128, 256)"),
		{Name: "causal", Kind: workload.Bool, Default: "false",
			Help: "mask keys after the query (needs kv_len = seq_len)"},
		{Name: "dtype", Kind: workload.Enum, Default: "bfloat16", Allowed: DtypeNames(), Aliases: dtypeAliases(),
			Help: "storage and output; float32 softmax and accumulation; float32 is IEEE (no TF32)"},
	}
}

// Phases: forward (the default), backward (the backward alone, after a
// forward made before timing) and both (forward and backward in one call).
func (Workload) Phases() []string {
	return []string{workload.PhaseForward, workload.PhaseBackward, workload.PhaseBoth}
}

// Shape is a configuration's sizes with the 0 defaults of kv_heads and
// kv_len resolved.
type Shape struct {
	Batch, Heads, KVHeads, SeqLen, KVLen, HeadDim int
	Causal                                        bool
}

// ShapeOf reads a resolved configuration.
func ShapeOf(cfg result.Config) Shape {
	s := Shape{Batch: cfg.Int("batch"), Heads: cfg.Int("heads"), KVHeads: cfg.Int("kv_heads"),
		SeqLen: cfg.Int("seq_len"), KVLen: cfg.Int("kv_len"), HeadDim: cfg.Int("head_dim"),
		Causal: cfg.Get("causal") == "true"}
	if s.KVHeads == 0 {
		s.KVHeads = s.Heads
	}
	if s.KVLen == 0 {
		s.KVLen = s.SeqLen
	}
	return s
}

// QShape is the shape of q, out, dout and dq; KShape of k, v, dk and dv.
func (s Shape) QShape() []int { return []int{s.Batch, s.Heads, s.SeqLen, s.HeadDim} }
func (s Shape) KShape() []int { return []int{s.Batch, s.KVHeads, s.KVLen, s.HeadDim} }

// Group is how many query heads share one kv head.
func (s Shape) Group() int { return s.Heads / s.KVHeads }

// Check holds the rules between parameters: kv_heads divides heads, causal
// only where the top-left and bottom-right masks agree, and sizes whose
// FLOP count fits an int64 and whose tensors hold at most MaxElements.
func (Workload) Check(cfg result.Config) error {
	s := ShapeOf(cfg)
	if s.Heads%s.KVHeads != 0 {
		return &workload.ValueError{Flag: "--heads --kv-heads", Value: fmt.Sprintf("%d %d", s.Heads, cfg.Int("kv_heads")),
			Allowed: "kv_heads dividing heads (each kv head serves heads/kv_heads query heads), or 0 for kv_heads = heads"}
	}
	if s.Causal && s.KVLen != s.SeqLen {
		return &workload.ValueError{Flag: "--causal --seq-len --kv-len", Value: fmt.Sprintf("true %d %d", s.SeqLen, cfg.Int("kv_len")),
			Allowed: "causal only with kv_len equal to seq_len (or 0), where the top-left and bottom-right causal masks agree"}
	}
	if _, ok := workload.MulInt64(s.Batch, s.Heads, s.SeqLen, s.KVLen, s.HeadDim); !ok {
		return &workload.ValueError{Flag: "--batch --heads --seq-len --kv-len --head-dim",
			Value:   fmt.Sprintf("%d %d %d %d %d", s.Batch, s.Heads, s.SeqLen, s.KVLen, s.HeadDim),
			Allowed: "batch·heads·seq_len·kv_len·head_dim below 2^63"}
	}
	tensors := []struct {
		name, flags, product string
		h, l                 int
	}{
		{"q (and out)", "--batch --heads --seq-len --head-dim", "batch·heads·seq_len·head_dim", s.Heads, s.SeqLen},
		{"k (and v)", "--batch --kv-heads --kv-len --head-dim", "batch·kv_heads·kv_len·head_dim", s.KVHeads, s.KVLen},
	}
	for _, t := range tensors {
		e, ok := workload.MulInt64(s.Batch, t.h, t.l, s.HeadDim)
		if !ok || e > MaxElements {
			return &workload.ValueError{Flag: t.flags, Value: fmt.Sprintf("%d %d %d %d", s.Batch, t.h, t.l, s.HeadDim),
				Allowed: fmt.Sprintf("%s holds %s = %s elements; at most %d (2^34) per tensor", t.name, t.product, workload.CountText(e, ok), MaxElements)}
		}
	}
	return nil
}

// Label is "b4 h32/8 s4096 d128 causal bfloat16": the kv heads and kv length
// only where they differ from the query's, so self-attention stays short.
func (Workload) Label(cfg result.Config) string {
	s := ShapeOf(cfg)
	heads := fmt.Sprintf("h%d", s.Heads)
	if s.KVHeads != s.Heads {
		heads += fmt.Sprintf("/%d", s.KVHeads)
	}
	parts := []string{fmt.Sprintf("b%d", s.Batch), heads, fmt.Sprintf("s%d", s.SeqLen)}
	if s.KVLen != s.SeqLen {
		parts = append(parts, fmt.Sprintf("kv%d", s.KVLen))
	}
	parts = append(parts, fmt.Sprintf("d%d", s.HeadDim))
	if s.Causal {
		parts = append(parts, "causal")
	}
	return strings.Join(append(parts, cfg.Dtype()), " ")
}

// SmallDefaults implements workload.Smaller: a verify on the CPU uses GQA
// (4 query heads on 2 kv heads) and sizes that are multiples of no tile
// (37 positions, head_dim 40), so a tiled kernel's tail masks run, and is
// small enough for a float64 reference in milliseconds. float32 so that the
// default verify is the strictest.
func (Workload) SmallDefaults() map[string]string {
	return map[string]string{"batch": "2", "heads": "4", "kv_heads": "2", "seq_len": "37", "kv_len": "0",
		"head_dim": "40", "dtype": "float32"}
}

// ColdCacheByDefault: attention is one kernel (or a fused pair), timed as
// GEMM is, with L2 flushed before each call unless --cold-cache=false;
// tritonbench's flash_attention operator flushes too.
func (Workload) ColdCacheByDefault() bool { return true }
