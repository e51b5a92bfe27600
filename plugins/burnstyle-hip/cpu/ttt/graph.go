package ttt

import (
	"fmt"
	"time"

	"github.com/xbench/xbench/harness/workload/ttt"
)

// graph is one step's computation: the model's operations on one tape.
type graph[T Float] struct {
	m             *Model[T]
	tp            *Tape[T]
	batch, seqLen int
	params        map[string]*Tensor[T] // each parameter's tensor on this tape
	clock         time.Time
	// layerBytes are what each layer's operations allocated on the tape.
	layerBytes []int64
}

// param is the tensor of a parameter, viewed as [1, 1, n] (a vector),
// [1, r, c] (a matrix) or [n, r, c]; one tensor per name and step, so every
// use adds to the same gradient.
func (g *graph[T]) param(name string) *Tensor[T] {
	if t, ok := g.params[name]; ok {
		return t
	}
	v, ok := g.m.values[name]
	if !ok {
		panic(fmt.Sprintf("param: %q is not a parameter of this configuration", name))
	}
	var shape []int
	for _, p := range g.m.params {
		if p.Name == name {
			shape = p.Shape
		}
	}
	dims := append(make([]int, 3-len(shape)), shape...)
	for i := range 3 - len(shape) {
		dims[i] = 1
	}
	if g.m.transposed[name] {
		dims[1], dims[2] = dims[2], dims[1]
	}
	t := g.tp.Param(dims[0], dims[1], dims[2], v)
	g.params[name] = t
	return t
}

// project is x @ W for the projection name, held transposed ([out, in]),
// which the product reads along its rows as it is.
func (g *graph[T]) project(x *Tensor[T], name string) *Tensor[T] {
	return g.tp.MatMul(x, g.param(name), false, true)
}

// phase closes the phase that ran since the last one, when profiling.
func (g *graph[T]) phase(name string) { g.clock = g.m.Phases.End(name, g.clock) }

// forward returns the logits [1, B*L, V].
func (g *graph[T]) forward(tokens []int32) *Tensor[T] {
	tp := g.tp
	h := tp.Embed(g.param("embed"), tokens)
	g.phase("embed")
	for l := 0; l < g.m.Size.Layers; l++ {
		before := tp.Bytes()
		pre := fmt.Sprintf("layers.%d.", l)
		if g.m.Backbone == "mamba" {
			x := tp.RMSNorm(h, g.param(pre+"conv_norm"))
			g.phase("rms_norm")
			y := tp.CausalConv(x, g.param(pre+"conv_w"), g.param(pre+"conv_b"), g.seqLen)
			g.phase("conv")
			h = tp.Add(h, y)
			g.phase("residual_add")
		}
		h = tp.Add(h, g.tttBlock(pre, tp.RMSNorm(h, g.param(pre+"ttt_norm"))))
		g.phase("residual_add")
		h = tp.Add(h, g.mlpBlock(pre, tp.RMSNorm(h, g.param(pre+"mlp_norm"))))
		g.phase("residual_add")
		g.layerBytes = append(g.layerBytes, tp.Bytes()-before)
	}
	xf := tp.RMSNorm(h, g.param("final_norm"))
	g.phase("rms_norm")
	logits := tp.MatMul(xf, g.param("embed"), false, true) // tied head
	g.phase("gemm")
	return logits
}

// tttBlock is the TTT layer on its normalised input x [1, B*L, C].
func (g *graph[T]) tttBlock(pre string, x *Tensor[T]) *Tensor[T] {
	tp, s, B := g.tp, g.m.Size, g.batch
	g.phase("rms_norm")
	p := func(name string) *Tensor[T] { return g.param(pre + "ttt." + name) }
	var xq, xk *Tensor[T]
	if g.m.Backbone == "mamba" { // shared Q/K projection, then a convolution each
		qk := g.project(x, pre+"ttt.wq")
		g.phase("gemm")
		xq = tp.CausalConv(qk, p("conv_q_w"), p("conv_q_b"), g.seqLen)
		xk = tp.CausalConv(qk, p("conv_k_w"), p("conv_k_b"), g.seqLen)
		g.phase("conv")
	} else {
		xq, xk = g.project(x, pre+"ttt.wq"), g.project(x, pre+"ttt.wk")
	}
	xv := g.project(x, pre+"ttt.wv")
	lr := tp.MatMul(x, p("lr_w"), false, true) // [1, B*L, nh]
	g.phase("gemm")

	gate := tp.SplitHeads(tp.Map(tp.Add(lr, p("lr_b")), sigmoid, sigmoidGrad), B, s.Heads)
	q := tp.Rope(tp.SplitHeads(xq, B, s.Heads), g.m.MiniBatch)
	k := tp.Rope(tp.SplitHeads(xk, B, s.Heads), g.m.MiniBatch)
	v := tp.SplitHeads(xv, B, s.Heads)
	g.phase("rope_split_heads")

	out := innerLoop(tp, g.innerParams(pre+"ttt."), q, k, v, gate, B, g.m.MiniBatch)
	g.phase("ttt_inner")

	xh, _ := tp.LayerNorm(tp.MergeHeads(out, B, s.Heads))
	o := tp.Affine(xh, p("post_norm_w"), p("post_norm_b"))
	g.phase("merge_heads_layer_norm")
	if g.m.Backbone == "mamba" {
		xg := g.project(x, pre+"ttt.wg")
		g.phase("gemm")
		o = tp.Mul(tp.Map(xg, gelu, geluGrad), o)
		g.phase("gate")
	}
	y := g.project(o, pre+"ttt.wo")
	g.phase("gemm")
	return y
}

// innerParams views layer prefix's inner-model parameters per head.
func (g *graph[T]) innerParams(prefix string) innerParams[T] {
	s := g.m.Size
	perHead := func(name string) *Tensor[T] { // [nh, n] as [nh, 1, n]
		t := g.param(prefix + name)
		return g.tp.Reshape(t, s.Heads, 1, t.Len()/s.Heads)
	}
	ip := innerParams[T]{mlp: g.m.TTTType == "mlp", baseLR: ttt.BaseLR(g.m.TTTType),
		w1: g.param(prefix + "W1"), b1: perHead("b1"), lnW: perHead("ln_w"), lnB: perHead("ln_b"),
		tokDelta: g.tp.Reshape(g.param(prefix+"tok_delta"), 1, g.m.MiniBatch, 1)}
	if ip.mlp {
		ip.w2, ip.b2 = g.param(prefix+"W2"), perHead("b2")
	}
	return ip
}

// mlpBlock is SwiGLU on its normalised input x: (silu(x Wg) * (x Wu)) Wd.
func (g *graph[T]) mlpBlock(pre string, x *Tensor[T]) *Tensor[T] {
	tp := g.tp
	g.phase("rms_norm")
	gate := g.project(x, pre+"mlp.w_gate")
	up := g.project(x, pre+"mlp.w_up")
	g.phase("gemm")
	a := tp.Mul(tp.Map(gate, silu, siluGrad), up)
	g.phase("swiglu")
	y := g.project(a, pre+"mlp.w_down")
	g.phase("gemm")
	return y
}
