package reference

import "github.com/xbench/xbench/harness/numeric"

// mlpStepBack is the backward of mlpStep (docs/ttt-backward.md, "The inner
// loop, mlp"), the two-layer model's version of linearStepBack.
func (p *Inner[T]) mlpStepBack(bs *innerBackScratch[T], hd int, in stepInputs[T], d stepGrads[T]) {
	k, f, h := p.K, p.F, p.Hidden
	s := bs.fw
	p.fillEta(s.eta, in.gate)
	p.mlpG(s, hd, in.kx, in.vx)
	p.mlpZbar(s, in.q, in.kx)
	numeric.GemmNT(bs.hh, s.g2, s.w2, k, f, h) // H = G2 W2^T, which mlpG folded into G1
	e := s.eta[(k-1)*k:]
	for _, v := range [][]T{d.dk, bs.dg1, bs.dg2, bs.da1, bs.deta} {
		clear(v)
	}

	p.outputBack(bs, hd, s.z2bar, in, d) // bs.dzb = dZ2bar
	// Z2bar = X2bar W2 + b2 - M2 G2, M2 built on (X2bar, X2).
	numeric.GemmNT(bs.da1b, bs.dzb, s.w2, k, f, h)
	copy(bs.nw2, bs.dw2)
	gemmTN(bs.nw2, s.x2bar, bs.dzb, h, k, f, true)
	copy(bs.nb2, bs.db2)
	addRowSums(bs.nb2, bs.dzb, k, f)
	dualCorrectBack(bs.da1b, bs.da1, bs.dg2, bs.deta, bs.dzb, s.x2bar, s.x2, s.g2, s.eta, bs.pm, k, h, f)
	// X2bar = gelu(Z1bar); Z1bar = Q W1 + b1 - M1 G1, M1 built on (Q, Kx).
	for i, v := range s.zbar {
		bs.dz1b[i] = bs.da1b[i] * geluGrad(v)
	}
	numeric.GemmNT(bs.tmpF, bs.dz1b, s.w1, k, h, f)
	numeric.Axpy(d.dq, 1, bs.tmpF)
	copy(bs.nw1, bs.dw1)
	gemmTN(bs.nw1, in.q, bs.dz1b, f, k, h, true)
	copy(bs.nb1, bs.db1)
	addRowSums(bs.nb1, bs.dz1b, k, h)
	dualCorrectBack(d.dq, d.dk, bs.dg1, bs.deta, bs.dz1b, in.q, in.kx, s.g1, s.eta, bs.pm, k, f, h)
	// The updates of both layers to the next mini-batch's state.
	de := bs.deta[(k-1)*k:]
	updateBack(d.dk, bs.dg1, de, in.kx, s.g1, e, bs.dw1, bs.db1, bs.tmpF, bs.tmpH, k, f, h)
	updateBack(bs.da1, bs.dg2, de, s.x2, s.g2, e, bs.dw2, bs.db2, bs.tmpH, bs.tmp2, k, h, f)
	// G1 = H * gelu'(Z1), H = G2 W2^T.
	for i, v := range s.z1 {
		bs.dhh[i] = bs.dg1[i] * geluGrad(v)
		bs.dz1[i] = bs.dg1[i] * bs.hh[i] * geluGrad2(v)
	}
	numeric.GemmNN(bs.dg2, bs.dhh, s.w2, k, h, f, true)
	gemmTN(bs.nw2, bs.dhh, s.g2, h, k, f, true)
	// G2 = ℓ(Z2, V - X); Z2 = X2 W2 + b2, X2 = gelu(Z1), Z1 = X W1 + b1.
	p.targetBack(bs, hd, bs.dz2, bs.dg2, s.z2, in, d)
	numeric.GemmNT(bs.tmpH, bs.dz2, s.w2, k, f, h)
	numeric.Axpy(bs.da1, 1, bs.tmpH)
	gemmTN(bs.nw2, s.x2, bs.dz2, h, k, f, true)
	addRowSums(bs.nb2, bs.dz2, k, f)
	for i, v := range s.z1 {
		bs.dz1[i] += bs.da1[i] * geluGrad(v)
	}
	numeric.GemmNT(bs.tmpF, bs.dz1, s.w1, k, h, f)
	numeric.Axpy(d.dk, 1, bs.tmpF)
	gemmTN(bs.nw1, in.kx, bs.dz1, f, k, h, true)
	addRowSums(bs.nb1, bs.dz1, k, h)
	p.rateBack(bs, in.gate, d.dgate)
}
