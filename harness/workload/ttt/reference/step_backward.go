package reference

import "github.com/xbench/xbench/harness/numeric"

// The backward of one mini-batch of the inner loop, linear and mlp
// (docs/ttt-backward.md, "The inner loop"). The state at the mini-batch's
// start is in bs.fw; the gradient with respect to the state after it is
// (bs.dw1, bs.db1, bs.dw2, bs.db2), and the one at its start is built in
// (bs.nw1, bs.nb1, bs.nw2, bs.nb2).

// stepInputs are one mini-batch's forward inputs and the gradient of its
// output, [K, f] rows (gate [K]).
type stepInputs[T Float] struct{ q, kx, vx, gate, dout []T }

// stepGrads are where the mini-batch's input gradients go.
type stepGrads[T Float] struct{ dq, dk, dv, dgate []T }

// gemmTN sets (or, accumulating, adds) c[m,n] = a[k,m]^T @ b[k,n]: a sum of
// k outer products, the shape of every weight gradient in the inner loop.
func gemmTN[T Float](c, a, b []T, m, k, n int, accumulate bool) {
	if !accumulate {
		clear(c[:m*n])
	}
	for p := 0; p < k; p++ {
		br := b[p*n : (p+1)*n]
		for i, x := range a[p*m : (p+1)*m] {
			numeric.Axpy(c[i*n:(i+1)*n], x, br)
		}
	}
}

// addRowSums adds the sum of x's rows [k, n] into dst [n].
func addRowSums[T Float](dst, x []T, k, n int) {
	for j := 0; j < k; j++ {
		numeric.Axpy(dst[:n], 1, x[j*n:(j+1)*n])
	}
}

// dualCorrectBack is the backward of dualCorrect (dst_i -= sum_{j<=i}
// M[i,j] g_j, M[i,j] = eta[i,j] (u_i . v_j + 1)) given ddst: it adds
// into du, dv, dg and deta. pm [K, K] is scratch.
func dualCorrectBack[T Float](du, dv, dg, deta, ddst, u, v, g, eta, pm []T, k, width, out int) {
	for i := 0; i < k; i++ {
		di, ui := ddst[i*out:(i+1)*out], u[i*width:(i+1)*width]
		for j := 0; j <= i; j++ {
			a := numeric.Dot(ui, v[j*width:(j+1)*width]) + 1
			e := eta[i*k+j]
			dm := -numeric.Dot(di, g[j*out:(j+1)*out]) // d loss / d M[i,j]
			deta[i*k+j] += dm * a
			pm[i*k+j] = dm * e // d loss / d (u_i . v_j)
			numeric.Axpy(dg[j*out:(j+1)*out], -e*a, di)
		}
		clear(pm[i*k+i+1 : (i+1)*k])
	}
	numeric.GemmNN(du, pm, v, k, k, width, true)
	gemmTN(dv, pm, u, k, k, width, true)
}

// updateBack adds the end-of-mini-batch update's share (W' = W - x^T
// diag(e) g, b' = b - g^T e) of the gradients of x [K, in], g [K, out] and
// e (the last row of eta) given dw' [in, out], db' [out]. tmpIn [K, in]
// and tmpOut [K, out] are scratch. (The identity part, dW += dW', is the
// caller's.)
func updateBack[T Float](dx, dg, de, x, g, e, dw, db, tmpIn, tmpOut []T, k, in, out int) {
	numeric.GemmNN(tmpOut, x, dw, k, in, out, false) // x_j dW'
	numeric.GemmNT(tmpIn, g, dw, k, out, in)         // g_j dW'^T
	for j := 0; j < k; j++ {
		xw := tmpOut[j*out : (j+1)*out]
		numeric.Axpy(xw, 1, db) // x_j dW' + db'
		gj := g[j*out : (j+1)*out]
		de[j] -= numeric.Dot(xw, gj)
		numeric.Axpy(dg[j*out:(j+1)*out], -e[j], xw)
		numeric.Axpy(dx[j*in:(j+1)*in], -e[j], tmpIn[j*in:(j+1)*in])
	}
}

// outputBack is the backward of out = q + LN(zbar), head hd's LayerNorm:
// dq = dout, and it sets bs.dzb = dzbar and adds into dln_w, dln_b.
func (p *Inner[T]) outputBack(bs *innerBackScratch[T], hd int, zbar []T, in stepInputs[T], d stepGrads[T]) {
	f := p.F
	w := p.lnW[hd*f : (hd+1)*f]
	copy(d.dq, in.dout)
	for i := 0; i < p.K; i++ {
		xh, dz, do := bs.xhb[i*f:(i+1)*f], bs.dzb[i*f:(i+1)*f], in.dout[i*f:(i+1)*f]
		s := normalizeRow(xh, zbar[i*f:(i+1)*f])
		for c, v := range do {
			bs.dgw[c] += v * xh[c]
			bs.dgb[c] += v
			dz[c] = v * w[c]
		}
		lnBackRow(dz, dz, xh, s)
	}
}

// targetBack is the backward of G = ℓ(Z, Vx - Kx), row by row: it sets
// dz [K, f] and dv = dT, takes dT from dk and adds into dln_w, dln_b.
func (p *Inner[T]) targetBack(bs *innerBackScratch[T], hd int, dz, dgrad, z []T, in stepInputs[T], d stepGrads[T]) {
	f := p.F
	w, b := p.lnW[hd*f:(hd+1)*f], p.lnB[hd*f:(hd+1)*f]
	target := bs.fw.target // lnGradRows left Vx - Kx here
	for i := 0; i < p.K; i++ {
		r := func(x []T) []T { return x[i*f : (i+1)*f] }
		lnL2GradBack(r(dz), r(d.dv), bs.dgw, bs.dgb, r(dgrad), r(z), r(target), w, b, bs.rowA, bs.rowB)
		numeric.Axpy(r(d.dk), -1, r(d.dv))
	}
}

// rateBack turns d loss / d eta into the gate's and the token schedule's
// gradients: eta[i,j] = base_lr * tok[i] * gate[j] / f.
func (p *Inner[T]) rateBack(bs *innerBackScratch[T], gate, dgate []T) {
	k := p.K
	sc := p.baseLR / T(p.F)
	clear(dgate[:k])
	for i := 0; i < k; i++ {
		ti := sc * p.tok[i]
		var dt T
		for j := 0; j <= i; j++ {
			de := bs.deta[i*k+j]
			dgate[j] += de * ti
			dt += de * gate[j]
		}
		bs.dtok[i] += dt * sc
	}
}

// linearStepBack is the backward of linearStep.
func (p *Inner[T]) linearStepBack(bs *innerBackScratch[T], hd int, in stepInputs[T], d stepGrads[T]) {
	k, f := p.K, p.F
	s := bs.fw
	p.fillEta(s.eta, in.gate)
	p.linearG(s, hd, in.kx, in.vx)
	p.linearZbar(s, in.q, in.kx)
	z, g, e := s.z1[:k*f], s.g1[:k*f], s.eta[(k-1)*k:]
	dg := bs.dg1[:k*f]
	clear(d.dk)
	clear(dg)
	clear(bs.deta)

	p.outputBack(bs, hd, s.zbar[:k*f], in, d)
	// Zbar = Q W + b - M G.
	numeric.GemmNT(bs.tmpF, bs.dzb, s.w1, k, f, f)
	numeric.Axpy(d.dq, 1, bs.tmpF)
	copy(bs.nw1, bs.dw1)
	gemmTN(bs.nw1, in.q, bs.dzb, f, k, f, true)
	copy(bs.nb1, bs.db1)
	addRowSums(bs.nb1, bs.dzb, k, f)
	dualCorrectBack(d.dq, d.dk, dg, bs.deta, bs.dzb, in.q, in.kx, g, s.eta, bs.pm, k, f, f)
	// The update to the next mini-batch's state.
	updateBack(d.dk, dg, bs.deta[(k-1)*k:], in.kx, g, e, bs.dw1, bs.db1, bs.tmpF, bs.tmp2, k, f, f)
	// G = ℓ(Z, V - X), Z = X W + b.
	dz := bs.dz2
	p.targetBack(bs, hd, dz, dg, z, in, d)
	numeric.GemmNT(bs.tmpF, dz, s.w1, k, f, f)
	numeric.Axpy(d.dk, 1, bs.tmpF)
	gemmTN(bs.nw1, in.kx, dz, f, k, f, true)
	addRowSums(bs.nb1, dz, k, f)
	p.rateBack(bs, in.gate, d.dgate)
}
