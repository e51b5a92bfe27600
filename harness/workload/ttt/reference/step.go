package reference

import "github.com/xbench/xbench/harness/numeric"

// The two inner models' mini-batch steps (spec step 4 and the mlp variant).
// Every buffer is row-major; q, kx, vx, out are the mini-batch's [K, f] rows
// of one (sequence, head), gate its K gate values. The terms
// (eta*A) @ G + tril(eta) @ G are computed together as
// sum_{j<=i} eta[i,j] * (A[i,j] + 1) * G[j].

// affine sets dst = x @ w + b (b broadcast over rows), x [rows, in], w [in, out].
func affine[T Float](dst, x, w, b []T, rows, in, out int) {
	for r := 0; r < rows; r++ {
		copy(dst[r*out:(r+1)*out], b)
	}
	numeric.GemmNN(dst, x, w, rows, in, out, true)
}

// dualCorrect subtracts sum_{j<=i} eta[i,j] * (dot(u_i, v_j) + 1) * g_j from
// each row i of dst [K, out], with u, v [K, width] and g [K, out]; m [K, K]
// is scratch. It is the in-mini-batch part of the dual form.
func dualCorrect[T Float](dst, u, v, g, eta, m []T, k, width, out int) {
	for i := 0; i < k; i++ {
		ui := u[i*width : (i+1)*width]
		for j := 0; j <= i; j++ {
			m[i*k+j] = -eta[i*k+j] * (numeric.Dot(ui, v[j*width:(j+1)*width]) + 1)
		}
		clear(m[i*k+i+1 : (i+1)*k]) // tril: the future does not leak back
	}
	numeric.GemmNN(dst, m, g, k, k, out, true)
}

// update applies the end-of-mini-batch step W -= x^T @ (eta_last * g),
// b -= sum_j eta_last[j] g_j, with x [K, in], g [K, out], W [in, out];
// xt [in, K] and gs [K, out] are scratch.
func update[T Float](w, b, x, g, etaLast, xt, gs []T, k, in, out int) {
	for j := 0; j < k; j++ {
		e := -etaLast[j]
		for c, v := range g[j*out : (j+1)*out] {
			gs[j*out+c] = e * v
		}
		numeric.Axpy(b, 1, gs[j*out:(j+1)*out])
		for a := 0; a < in; a++ {
			xt[a*k+j] = x[j*in+a]
		}
	}
	numeric.GemmNN(w, xt, gs, in, k, out, true)
}

// lnGradRows sets g = LN-L2 gradient of z against target = vx - kx, row by
// row, with head hd's LayerNorm.
func (p *Inner[T]) lnGradRows(s *innerScratch[T], hd int, g, z, kx, vx []T) {
	f := p.F
	w, b := p.lnW[hd*f:(hd+1)*f], p.lnB[hd*f:(hd+1)*f]
	for i := range s.target[:p.K*f] {
		s.target[i] = vx[i] - kx[i]
	}
	for i := 0; i < p.K; i++ {
		lnL2Grad(g[i*f:(i+1)*f], z[i*f:(i+1)*f], s.target[i*f:(i+1)*f], w, b, s.xh)
	}
}

// residualLN sets out = q + LN(zbar) row by row, with head hd's LayerNorm.
func (p *Inner[T]) residualLN(hd int, out, q, zbar []T) {
	f := p.F
	w, b := p.lnW[hd*f:(hd+1)*f], p.lnB[hd*f:(hd+1)*f]
	for i := 0; i < p.K; i++ {
		o := out[i*f : (i+1)*f]
		layerNormRow(o, zbar[i*f:(i+1)*f], w, b)
		for c, v := range q[i*f : (i+1)*f] {
			o[c] += v
		}
	}
}

// linearStep is one mini-batch of the linear inner model.
func (p *Inner[T]) linearStep(s *innerScratch[T], hd int, q, kx, vx, gate, out []T) {
	k, f := p.K, p.F
	p.fillEta(s.eta, gate)
	p.linearG(s, hd, kx, vx)
	p.linearZbar(s, q, kx)
	p.residualLN(hd, out, q, s.zbar[:k*f])
	update(s.w1, s.b1, kx, s.g1[:k*f], s.eta[(k-1)*k:], s.xt, s.gs, k, f, f)
}

// linearG sets s.z1 = Z = Kx @ W1 + b1 and s.g1 = G, its LN-L2 gradient.
func (p *Inner[T]) linearG(s *innerScratch[T], hd int, kx, vx []T) {
	k, f := p.K, p.F
	affine(s.z1[:k*f], kx, s.w1, s.b1, k, f, f)
	p.lnGradRows(s, hd, s.g1[:k*f], s.z1[:k*f], kx, vx)
}

// linearZbar sets s.zbar = Q @ W1 + b1 - (eta * A + tril(eta)) @ G, with
// s.eta and s.g1 already set.
func (p *Inner[T]) linearZbar(s *innerScratch[T], q, kx []T) {
	k, f := p.K, p.F
	zbar := s.zbar[:k*f]
	affine(zbar, q, s.w1, s.b1, k, f, f)
	dualCorrect(zbar, q, kx, s.g1[:k*f], s.eta, s.a, k, f, f)
}

// mlpStep is one mini-batch of the two-layer (gelu) inner model.
func (p *Inner[T]) mlpStep(s *innerScratch[T], hd int, q, kx, vx, gate, out []T) {
	k, f, h := p.K, p.F, p.Hidden
	p.fillEta(s.eta, gate)
	p.mlpG(s, hd, kx, vx)
	p.mlpZbar(s, q, kx)
	p.residualLN(hd, out, q, s.z2bar)

	etaLast := s.eta[(k-1)*k:]
	update(s.w1, s.b1, kx, s.g1, etaLast, s.xt, s.gs, k, f, h)
	update(s.w2, s.b2, s.x2, s.g2, etaLast, s.xt, s.gs, k, h, f)
}

// mlpG sets Z1, X2 = gelu(Z1), Z2, G2 (the LN-L2 gradient at Z2) and
// G1 = (G2 @ W2^T) * gelu'(Z1) in s.
func (p *Inner[T]) mlpG(s *innerScratch[T], hd int, kx, vx []T) {
	k, f, h := p.K, p.F, p.Hidden
	affine(s.z1, kx, s.w1, s.b1, k, f, h) // Z1
	for i, v := range s.z1 {
		s.x2[i] = gelu(v)
	}
	affine(s.z2, s.x2, s.w2, s.b2, k, h, f) // Z2
	p.lnGradRows(s, hd, s.g2, s.z2, kx, vx) // G2
	// G1 = (G2 @ W2^T) * gelu'(Z1); row c of W2 [h, f] is contiguous.
	numeric.GemmNT(s.g1, s.g2, s.w2, k, f, h)
	for i, v := range s.z1 {
		s.g1[i] *= geluGrad(v)
	}
}

// mlpZbar sets Z1bar (s.zbar), X2bar = gelu(Z1bar) (s.x2bar) and Z2bar
// (s.z2bar), with s.eta and mlpG's results already set.
func (p *Inner[T]) mlpZbar(s *innerScratch[T], q, kx []T) {
	k, f, h := p.K, p.F, p.Hidden
	affine(s.zbar, q, s.w1, s.b1, k, f, h) // Z1bar
	dualCorrect(s.zbar, q, kx, s.g1, s.eta, s.a, k, f, h)
	for i, v := range s.zbar {
		s.x2bar[i] = gelu(v)
	}
	affine(s.z2bar, s.x2bar, s.w2, s.b2, k, h, f) // Z2bar
	dualCorrect(s.z2bar, s.x2bar, s.x2, s.g2, s.eta, s.a, k, h, f)
}
