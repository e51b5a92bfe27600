package reference

import (
	"fmt"

	"github.com/xbench/xbench/harness/numeric"
)

// InnerGrads are the gradients of one TTT layer's inner-model parameters,
// laid out as the parameters are: W1 [nh, f, hidden], B1 [nh, hidden],
// W2 [nh, hidden, f] and B2 [nh, f] (mlp), LnW, LnB [nh, f], TokDelta [K].
type InnerGrads[T Float] struct {
	W1, B1, W2, B2, LnW, LnB, TokDelta []T
}

// NewInnerGrads allocates gradients shaped as p's parameters.
func (p *Inner[T]) NewInnerGrads() *InnerGrads[T] {
	g := &InnerGrads[T]{W1: make([]T, len(p.w1)), B1: make([]T, len(p.b1)), LnW: make([]T, len(p.lnW)),
		LnB: make([]T, len(p.lnB)), TokDelta: make([]T, p.K)}
	if p.MLP {
		g.W2, g.B2 = make([]T, len(p.w2)), make([]T, len(p.b2))
	}
	return g
}

// innerBackScratch is one worker's buffers for the backward of one
// (sequence, head): the forward of one mini-batch recomputed (fw), the
// state at every mini-batch's start, and the gradients being carried.
type innerBackScratch[T Float] struct {
	fw     *innerScratch[T]
	states []T // [L/K, stateSize]

	// The gradient with respect to the state after the mini-batch being
	// walked (carried in from the next one) and at its start (being built).
	dw1, db1, dw2, db2 []T
	nw1, nb1, nw2, nb2 []T

	xhb            []T // [K, f] the output LayerNorm's normalised Zbar
	sb             []T // [K] its s
	dzb            []T // [K, f] dZbar (linear) or dZ2bar (mlp)
	dz1b, da1b     []T // [K, hidden]
	da1, dg1, dz1  []T // [K, hidden]
	hh, dhh        []T // [K, hidden]: H = G2 @ W2^T and its gradient
	dg2, dz2, tmp2 []T // [K, f]
	tmpH, tmpF     []T // [K, hidden], [K, f]
	pm, deta       []T // [K, K]
	rowA, rowB     []T // [f]: lnL2GradBack's scratch
	dgw, dgb, dtok []T // this item's dln_w, dln_b [f] and dtok [K]
	elems          int // what the buffers but states hold, for Bytes
}

// stateSize is the number of values in one head's inner state.
func (p *Inner[T]) stateSize() int {
	n := p.F*p.Hidden + p.Hidden
	if p.MLP {
		n += p.Hidden*p.F + p.F
	}
	return n
}

func (p *Inner[T]) ensureBackScratch(seqLen int) {
	p.ensureScratch()
	f, h, k := p.F, p.Hidden, p.K
	need := seqLen / k * p.stateSize()
	for len(p.back) < numeric.NumWorkers() {
		var c counted[T]
		vec := c.vec
		p.back = append(p.back, &innerBackScratch[T]{
			fw:  p.scratch[len(p.back)],
			dw1: vec(f * h), db1: vec(h), dw2: vec(h * f), db2: vec(f),
			nw1: vec(f * h), nb1: vec(h), nw2: vec(h * f), nb2: vec(f),
			xhb: vec(k * f), sb: vec(k), dzb: vec(k * f),
			dz1b: vec(k * h), da1b: vec(k * h), da1: vec(k * h), dg1: vec(k * h), dz1: vec(k * h),
			hh: vec(k * h), dhh: vec(k * h), dg2: vec(k * f), dz2: vec(k * f), tmp2: vec(k * f),
			tmpH: vec(k * h), tmpF: vec(k * f), pm: vec(k * k), deta: vec(k * k),
			rowA: vec(f), rowB: vec(f), dgw: vec(f), dgb: vec(f), dtok: vec(k),
		})
		p.back[len(p.back)-1].elems = c.n
	}
	for _, b := range p.back {
		if len(b.states) < need {
			b.states = make([]T, need)
		}
	}
}

// Backward is the backward of Run (docs/ttt-backward.md, "The inner
// loop"): given dout, the gradient with respect to Run's out, and Run's
// inputs, it sets dxq, dxk, dxv [B, nh, L, f], dgate [B, nh, L] and g.
// Every (sequence, head) is one work item: it re-runs the forward chain to
// record the state at each mini-batch's start, then walks the mini-batches
// in reverse, recomputing each one's forward from its recorded state.
// Items write the parameter gradients into their own slot of p.partial,
// summed over sequences afterwards in a fixed order.
func (p *Inner[T]) Backward(g *InnerGrads[T], dxq, dxk, dxv, dgate, dout, xq, xk, xv, gate []T, batch, seqLen int) {
	f, k := p.F, p.K
	if seqLen%k != 0 {
		panic(fmt.Sprintf("cpu.Inner.Backward: seq_len %d not a multiple of mini-batch %d", seqLen, k))
	}
	p.ensureBackScratch(seqLen)
	items, ss, nb := batch*p.Heads, p.stateSize(), seqLen/k
	if len(p.partial) < items*ss {
		p.partial = make([]T, items*ss)
	}
	if len(p.partialLN) < items*(2*f+k) {
		p.partialLN = make([]T, items*(2*f+k))
	}
	numeric.ParallelFor(items, func(worker, item int) {
		bs := p.back[worker]
		hd := item % p.Heads
		seq := item * seqLen * f
		rows := func(x []T, n int) []T { return x[seq+n*k*f : seq+(n+1)*k*f] }
		gates := func(x []T, n int) []T { return x[item*seqLen+n*k : item*seqLen+(n+1)*k] }

		p.resetState(bs.fw, hd)
		for n := 0; n < nb; n++ {
			p.saveState(bs, n)
			p.advance(bs.fw, hd, rows(xk, n), rows(xv, n), gates(gate, n))
		}
		for _, v := range [][]T{bs.dw1, bs.db1, bs.dw2, bs.db2, bs.dgw, bs.dgb, bs.dtok} {
			clear(v)
		}
		for n := nb - 1; n >= 0; n-- {
			p.loadState(bs, n)
			d := stepGrads[T]{dq: rows(dxq, n), dk: rows(dxk, n), dv: rows(dxv, n), dgate: gates(dgate, n)}
			in := stepInputs[T]{q: rows(xq, n), kx: rows(xk, n), vx: rows(xv, n), gate: gates(gate, n), dout: rows(dout, n)}
			if p.MLP {
				p.mlpStepBack(bs, hd, in, d)
			} else {
				p.linearStepBack(bs, hd, in, d)
			}
			bs.dw1, bs.nw1 = bs.nw1, bs.dw1
			bs.db1, bs.nb1 = bs.nb1, bs.db1
			bs.dw2, bs.nw2 = bs.nw2, bs.dw2
			bs.db2, bs.nb2 = bs.nb2, bs.db2
		}
		part := p.partial[item*ss : (item+1)*ss]
		packState(part, bs.dw1, bs.db1, bs.dw2, bs.db2, p.MLP)
		copy(p.partialLN[item*(2*f+k):], bs.dgw)
		copy(p.partialLN[item*(2*f+k)+f:], bs.dgb)
		copy(p.partialLN[item*(2*f+k)+2*f:], bs.dtok)
	})
	p.sumPartials(g, batch)
}

// sumPartials adds the items' gradients over sequences into g, in order.
func (p *Inner[T]) sumPartials(g *InnerGrads[T], batch int) {
	f, h, k, ss := p.F, p.Hidden, p.K, p.stateSize()
	for _, v := range [][]T{g.W1, g.B1, g.W2, g.B2, g.LnW, g.LnB, g.TokDelta} {
		clear(v)
	}
	tok := make([]T, k)
	for b := 0; b < batch; b++ {
		for hd := 0; hd < p.Heads; hd++ {
			item := b*p.Heads + hd
			part := p.partial[item*ss : (item+1)*ss]
			numeric.Axpy(g.W1[hd*f*h:(hd+1)*f*h], 1, part[:f*h])
			numeric.Axpy(g.B1[hd*h:(hd+1)*h], 1, part[f*h:f*h+h])
			if p.MLP {
				o := f*h + h
				numeric.Axpy(g.W2[hd*h*f:(hd+1)*h*f], 1, part[o:o+h*f])
				numeric.Axpy(g.B2[hd*f:(hd+1)*f], 1, part[o+h*f:o+h*f+f])
			}
			ln := p.partialLN[item*(2*f+k) : (item+1)*(2*f+k)]
			numeric.Axpy(g.LnW[hd*f:(hd+1)*f], 1, ln[:f])
			numeric.Axpy(g.LnB[hd*f:(hd+1)*f], 1, ln[f:2*f])
			numeric.Axpy(tok, 1, ln[2*f:])
		}
	}
	// tok[i] = max(0, 1/(i+1) + tok_delta[i]): the clipped side is flat.
	for i, v := range tok {
		if p.tok[i] > 0 {
			g.TokDelta[i] = v
		}
	}
}

// packState writes (w1, b1[, w2, b2]) into dst, the states' layout.
func packState[T Float](dst, w1, b1, w2, b2 []T, mlp bool) {
	o := copy(dst, w1)
	o += copy(dst[o:], b1)
	if mlp {
		o += copy(dst[o:], w2)
		copy(dst[o:], b2)
	}
}

func (p *Inner[T]) saveState(bs *innerBackScratch[T], n int) {
	ss := p.stateSize()
	packState(bs.states[n*ss:(n+1)*ss], bs.fw.w1, bs.fw.b1, bs.fw.w2, bs.fw.b2, p.MLP)
}

func (p *Inner[T]) loadState(bs *innerBackScratch[T], n int) {
	st := bs.states[n*p.stateSize():]
	o := copy(bs.fw.w1, st)
	o += copy(bs.fw.b1, st[o:])
	if p.MLP {
		o += copy(bs.fw.w2, st[o:])
		copy(bs.fw.b2, st[o:])
	}
}

// advance moves s's state over one mini-batch without computing its
// output: the forward chain the backward re-runs.
func (p *Inner[T]) advance(s *innerScratch[T], hd int, kx, vx, gate []T) {
	k, f, h := p.K, p.F, p.Hidden
	p.fillEta(s.eta, gate)
	etaLast := s.eta[(k-1)*k:]
	if !p.MLP {
		p.linearG(s, hd, kx, vx)
		update(s.w1, s.b1, kx, s.g1[:k*f], etaLast, s.xt, s.gs, k, f, f)
		return
	}
	p.mlpG(s, hd, kx, vx)
	update(s.w1, s.b1, kx, s.g1, etaLast, s.xt, s.gs, k, f, h)
	update(s.w2, s.b2, s.x2, s.g2, etaLast, s.xt, s.gs, k, h, f)
}
