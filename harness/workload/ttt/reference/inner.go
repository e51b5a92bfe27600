package reference

import (
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/tensorfile"
)

// Inner is one TTT layer's inner model for every head: the learnable start
// state (W1, b1 and, for mlp, W2, b2), the inner LayerNorm, the token
// learning-rate schedule. Run applies the dual mini-batch form of spec
// step 4 to every (sequence, head) pair in parallel.
type Inner[T Float] struct {
	Heads, F, Hidden, K int // Hidden is f (linear) or 4f (mlp)
	MLP                 bool

	baseLR T
	tok    []T // [K]: max(0, 1/(i+1) + tok_delta[i]), fixed per layer
	lnW    []T // [nh, f]
	lnB    []T // [nh, f]
	w1     []T // [nh, f, hidden]
	b1     []T // [nh, hidden]
	w2     []T // [nh, hidden, f] (mlp)
	b2     []T // [nh, f] (mlp)

	scratch []*innerScratch[T] // one per worker goroutine

	// The backward's buffers (inner_backward.go), made on first use.
	back      []*innerBackScratch[T] // one per worker goroutine
	partial   []T                    // [B*nh, stateSize]: each item's dW1, db1 (, dW2, db2)
	partialLN []T                    // [B*nh, 2f+K]: each item's dln_w, dln_b, dtok
}

// innerScratch is one worker's state for one (sequence, head): the evolving
// inner weights and the mini-batch temporaries.
type innerScratch[T Float] struct {
	w1, b1, w2, b2 []T
	eta, a         []T // [K, K]
	z1, x2, g1     []T // [K, hidden]: Z (linear) or Z1, gelu(Z1), G1
	zbar           []T // [K, hidden]: Zbar (linear) or Z1bar
	x2bar          []T // [K, hidden]: gelu(Z1bar) (mlp)
	z2, g2, target []T // [K, f]
	z2bar          []T // [K, f]
	xh             []T // [f]
	xt, gs         []T // [hidden, K], [K, hidden]: update scratch
}

// NewInner builds the inner model from the tensors prefix+"tok_delta",
// "ln_w", "ln_b", "W1", "b1" and, for mlp, "W2", "b2" (prefix
// "layers.0.ttt." for an inner-only run).
func NewInner[T Float](w map[string]tensorfile.Tensor, prefix string, heads, f, k int, mlp bool, baseLR float64) (*Inner[T], error) {
	h := f
	if mlp {
		h = 4 * f
	}
	p := &Inner[T]{Heads: heads, F: f, Hidden: h, K: k, MLP: mlp, baseLR: T(baseLR)}
	delta, err := load[float64](w, prefix+"tok_delta", k)
	if err != nil {
		return nil, err
	}
	p.tok = make([]T, k)
	for i := range p.tok {
		p.tok[i] = T(math.Max(0, 1/float64(i+1)+delta[i]))
	}
	for _, t := range []struct {
		dst   *[]T
		name  string
		shape []int
	}{
		{&p.lnW, "ln_w", []int{heads, f}},
		{&p.lnB, "ln_b", []int{heads, f}},
		{&p.w1, "W1", []int{heads, f, h}},
		{&p.b1, "b1", []int{heads, h}},
		{&p.w2, "W2", []int{heads, h, f}},
		{&p.b2, "b2", []int{heads, f}},
	} {
		if !mlp && (t.name == "W2" || t.name == "b2") {
			continue
		}
		if *t.dst, err = load[T](w, prefix+t.name, t.shape...); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// NumParams counts the inner model's parameters (tok_delta included).
func (p *Inner[T]) NumParams() int64 {
	return int64(len(p.tok) + len(p.lnW) + len(p.lnB) + len(p.w1) + len(p.b1) + len(p.w2) + len(p.b2))
}

// Bytes is the memory the parameters and the per-worker scratch take, and
// the backward's buffers once Backward has run.
func (p *Inner[T]) Bytes() int64 {
	f, h, k := p.F, p.Hidden, p.K
	perWorker := 2*f*h + h + f + 2*k*k + 7*k*h + 4*k*f + f
	n := int(p.NumParams()) + numeric.NumWorkers()*perWorker + len(p.partial) + len(p.partialLN)
	for _, b := range p.back {
		n += len(b.states) + b.elems
	}
	return bytesOf[T](n)
}

func (p *Inner[T]) ensureScratch() {
	f, h, k := p.F, p.Hidden, p.K
	for len(p.scratch) < numeric.NumWorkers() {
		p.scratch = append(p.scratch, &innerScratch[T]{
			w1: make([]T, f*h), b1: make([]T, h), w2: make([]T, h*f), b2: make([]T, f),
			eta: make([]T, k*k), a: make([]T, k*k),
			z1: make([]T, k*h), x2: make([]T, k*h), g1: make([]T, k*h), zbar: make([]T, k*h), x2bar: make([]T, k*h),
			z2: make([]T, k*f), g2: make([]T, k*f), target: make([]T, k*f), z2bar: make([]T, k*f),
			xh: make([]T, f), xt: make([]T, h*k), gs: make([]T, k*h),
		})
	}
}

// Run computes out [B, nh, L, f] from xq, xk, xv [B, nh, L, f] (rotated)
// and gate [B, nh, L] (after the sigmoid). L must be a multiple of K.
func (p *Inner[T]) Run(out, xq, xk, xv, gate []T, batch, seqLen int) {
	f, k := p.F, p.K
	if seqLen%k != 0 {
		panic(fmt.Sprintf("cpu.Inner.Run: seq_len %d not a multiple of mini-batch %d", seqLen, k))
	}
	p.ensureScratch()
	numeric.ParallelFor(batch*p.Heads, func(worker, item int) {
		s := p.scratch[worker]
		hd := item % p.Heads
		p.resetState(s, hd)
		seq := item * seqLen * f
		for n := 0; n < seqLen/k; n++ {
			off := seq + n*k*f
			rows := k * f
			g := gate[item*seqLen+n*k : item*seqLen+(n+1)*k]
			if p.MLP {
				p.mlpStep(s, hd, xq[off:off+rows], xk[off:off+rows], xv[off:off+rows], g, out[off:off+rows])
			} else {
				p.linearStep(s, hd, xq[off:off+rows], xk[off:off+rows], xv[off:off+rows], g, out[off:off+rows])
			}
		}
	})
}

// resetState loads head hd's learnable start state: every sequence of the
// batch starts from the same W1, b1 (and W2, b2).
func (p *Inner[T]) resetState(s *innerScratch[T], hd int) {
	f, h := p.F, p.Hidden
	copy(s.w1, p.w1[hd*f*h:(hd+1)*f*h])
	copy(s.b1, p.b1[hd*h:(hd+1)*h])
	if p.MLP {
		copy(s.w2, p.w2[hd*h*f:(hd+1)*h*f])
		copy(s.b2, p.b2[hd*f:(hd+1)*f])
	}
}

// fillEta sets eta[i, j] = base_lr * tok[i] * gate[j] / f for j <= i and the
// whole last row, which weights the end-of-mini-batch update.
func (p *Inner[T]) fillEta(eta, gate []T) {
	k := p.K
	for i := 0; i < k; i++ {
		ti := p.baseLR * p.tok[i] / T(p.F)
		for j := 0; j < k; j++ {
			eta[i*k+j] = ti * gate[j]
		}
	}
}
