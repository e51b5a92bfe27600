package ttt

// innerParams are one TTT layer's inner-model parameters as tensors:
// w1 [nh, f, h], b1 [nh, 1, h], w2 [nh, h, f] and b2 [nh, 1, f] (mlp only),
// lnW and lnB [nh, 1, f], tokDelta [1, K, 1].
type innerParams[T Float] struct {
	w1, b1, w2, b2, lnW, lnB, tokDelta *Tensor[T]
	mlp                                bool
	baseLR                             float64
}

// innerLoop runs the inner model over q, k, v [B*nh, L, f] (RoPE already
// applied to q and k) with gate [B*nh, L, 1], one mini-batch of miniBatch
// rows at a time, and returns out [B*nh, L, f] (spec, "The TTT layer",
// steps 3 to 5). Every (sequence, head) starts from the learnable state.
func innerLoop[T Float](tp *Tape[T], p innerParams[T], q, k, v, gate *Tensor[T], batch, miniBatch int) *Tensor[T] {
	K, f, L := miniBatch, q.C, q.R
	// The state, one copy per (sequence, head): item b*nh + h is head h.
	w1, b1 := tp.Repeat(p.w1, batch), tp.Repeat(p.b1, batch)
	var w2, b2 *Tensor[T]
	if p.mlp {
		w2, b2 = tp.Repeat(p.w2, batch), tp.Repeat(p.b2, batch)
	}
	lnW, lnB := tp.Repeat(p.lnW, batch), tp.Repeat(p.lnB, batch)

	// tok[i] = max(0, 1/(i+1) + tok_delta[i]), scaled by base_lr / f.
	harmonic, mask := make([]T, K), make([]T, K*K)
	for i := 0; i < K; i++ {
		harmonic[i] = T(1 / float64(i+1))
		for j := 0; j <= i; j++ {
			mask[i*K+j] = 1 // tril keeps the diagonal
		}
	}
	tok := tp.Scale(tp.Map(tp.Add(p.tokDelta, tp.Const(1, K, 1, harmonic)), relu, step), p.baseLR/float64(f))
	tril := tp.Const(1, K, K, mask)

	outs := make([]*Tensor[T], 0, L/K)
	for n := 0; n < L/K; n++ {
		r0, r1 := n*K, (n+1)*K
		qn, kn, vn := tp.Rows(q, r0, r1), tp.Rows(k, r0, r1), tp.Rows(v, r0, r1)
		eta := tp.Mul(tok, tp.Transpose(tp.Rows(gate, r0, r1))) // [B*nh, K, K]
		etaLast := tp.Rows(eta, K-1, K)                         // [B*nh, 1, K]
		etaLastCol := tp.Transpose(etaLast)                     // [B*nh, K, 1]
		etaTril := tp.Mul(eta, tril)
		target := tp.Sub(vn, kn)

		// dual applies one layer of the inner model to the queries x after
		// the update from the keys' gradient g: x W - (eta * tril(x xk^T)) g
		// + (b - tril(eta) g), where xk were the layer's inputs for the keys.
		dual := func(x, xk, w, b, g *Tensor[T]) *Tensor[T] {
			a := tp.Mul(tp.MatMul(x, xk, false, true), tril)
			bbar := tp.Sub(b, tp.MatMul(etaTril, g, false, false))
			return tp.Add(tp.Sub(tp.MatMul(x, w, false, false), tp.MatMul(tp.Mul(eta, a), g, false, false)), bbar)
		}
		// update is the state after the mini-batch: w - xk^T (eta_last * g),
		// b - eta_last g.
		update := func(w, b, xk, g *Tensor[T]) (*Tensor[T], *Tensor[T]) {
			return tp.Sub(w, tp.MatMul(xk, tp.Mul(g, etaLastCol), true, false)),
				tp.Sub(b, tp.MatMul(etaLast, g, false, false))
		}

		var zbar *Tensor[T]
		if !p.mlp {
			z := tp.Add(tp.MatMul(kn, w1, false, false), b1)
			g := lnL2Grad(tp, z, target, lnW, lnB)
			zbar = dual(qn, kn, w1, b1, g)
			w1, b1 = update(w1, b1, kn, g)
		} else {
			z1 := tp.Add(tp.MatMul(kn, w1, false, false), b1)
			x2 := tp.Map(z1, gelu, geluGrad)
			z2 := tp.Add(tp.MatMul(x2, w2, false, false), b2)
			g2 := lnL2Grad(tp, z2, target, lnW, lnB)
			g1 := tp.Mul(tp.MatMul(g2, w2, false, true), tp.Map(z1, geluGrad, geluGrad2))
			x2bar := tp.Map(dual(qn, kn, w1, b1, g1), gelu, geluGrad)
			zbar = dual(x2bar, x2, w2, b2, g2)
			w1, b1 = update(w1, b1, kn, g1)
			w2, b2 = update(w2, b2, x2, g2)
		}
		xh, _ := tp.LayerNorm(zbar)
		outs = append(outs, tp.Add(qn, tp.Affine(xh, lnW, lnB)))
	}
	return tp.ConcatRows(outs)
}

// lnL2Grad is the gradient with respect to z of 1/2 |LN(z) - target|^2
// per row (spec step 5): (f g - sum(g) - xh sum(g xh)) / (f s) with
// g = (LN(z) - target) * ln_w.
func lnL2Grad[T Float](tp *Tape[T], z, target, lnW, lnB *Tensor[T]) *Tensor[T] {
	f := float64(z.C)
	xh, s := tp.LayerNorm(z)
	g := tp.Mul(tp.Sub(tp.Affine(xh, lnW, lnB), target), lnW)
	num := tp.Sub(tp.Sub(tp.Scale(g, f), tp.SumCols(g)), tp.Mul(xh, tp.SumCols(tp.Mul(g, xh))))
	return tp.Div(num, tp.Scale(s, f))
}
