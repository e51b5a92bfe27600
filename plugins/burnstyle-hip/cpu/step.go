package cpu

// The two inner models' mini-batch steps (spec step 4 and the mlp variant).
// Every buffer is row-major; q, kx, vx, out are the mini-batch's [K, f] rows
// of one (sequence, head), gate its K gate values. The terms
// (eta*A) @ G + tril(eta) @ G are computed together as
// sum_{j<=i} eta[i,j] * (A[i,j] + 1) * G[j].

// affine sets dst[r] = b + x[r] @ w for rows r of x [rows, in], w [in, out].
func affine[T Float](dst, x, w, b []T, rows, in, out int) {
	for r := 0; r < rows; r++ {
		d := dst[r*out : (r+1)*out]
		copy(d, b)
		xr := x[r*in : (r+1)*in]
		for a, v := range xr {
			axpy(d, v, w[a*out:(a+1)*out])
		}
	}
}

// dualCorrect subtracts sum_{j<=i} eta[i,j] * (dot(u_i, v_j) + 1) * g_j from
// each row i of dst [K, out], with u, v [K, width] and g [K, out]; a [K, K]
// is scratch. It is the in-mini-batch part of the dual form.
func dualCorrect[T Float](dst, u, v, g, eta, a []T, k, width, out int) {
	for i := 0; i < k; i++ {
		ui := u[i*width : (i+1)*width]
		d := dst[i*out : (i+1)*out]
		for j := 0; j <= i; j++ {
			a[i*k+j] = dot(ui, v[j*width:(j+1)*width])
			axpy(d, -eta[i*k+j]*(a[i*k+j]+1), g[j*out:(j+1)*out])
		}
	}
}

// update applies the end-of-mini-batch step W -= x^T @ (eta_last * g),
// b -= sum_j eta_last[j] g_j, with x [K, in], g [K, out], W [in, out].
func update[T Float](w, b, x, g, etaLast []T, k, in, out int) {
	for j := 0; j < k; j++ {
		e := etaLast[j]
		gj := g[j*out : (j+1)*out]
		for a := 0; a < in; a++ {
			axpy(w[a*out:(a+1)*out], -e*x[j*in+a], gj)
		}
		axpy(b, -e, gj)
	}
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
	z, g, zbar := s.z1[:k*f], s.g1[:k*f], s.zbar[:k*f]

	affine(z, kx, s.w1, s.b1, k, f, f) // Z = Kx @ W1 + b1
	p.lnGradRows(s, hd, g, z, kx, vx)  // G

	affine(zbar, q, s.w1, s.b1, k, f, f) // Q @ W1 + b1 ...
	dualCorrect(zbar, q, kx, g, s.eta, s.a, k, f, f)
	p.residualLN(hd, out, q, zbar)

	update(s.w1, s.b1, kx, g, s.eta[(k-1)*k:], k, f, f)
}

// mlpStep is one mini-batch of the two-layer (gelu) inner model.
func (p *Inner[T]) mlpStep(s *innerScratch[T], hd int, q, kx, vx, gate, out []T) {
	k, f, h := p.K, p.F, p.Hidden
	p.fillEta(s.eta, gate)

	affine(s.z1, kx, s.w1, s.b1, k, f, h) // Z1
	for i, v := range s.z1 {
		s.x2[i] = gelu(v)
	}
	affine(s.z2, s.x2, s.w2, s.b2, k, h, f) // Z2
	p.lnGradRows(s, hd, s.g2, s.z2, kx, vx) // G2
	// G1 = (G2 @ W2^T) * gelu'(Z1); row c of W2 [h, f] is contiguous.
	for i := 0; i < k; i++ {
		g2i := s.g2[i*f : (i+1)*f]
		for c := 0; c < h; c++ {
			s.g1[i*h+c] = dot(g2i, s.w2[c*f:(c+1)*f]) * geluGrad(s.z1[i*h+c])
		}
	}

	affine(s.zbar, q, s.w1, s.b1, k, f, h) // Z1bar
	dualCorrect(s.zbar, q, kx, s.g1, s.eta, s.a, k, f, h)
	for i, v := range s.zbar {
		s.zbar[i] = gelu(v) // now X2bar
	}
	affine(s.z2bar, s.zbar, s.w2, s.b2, k, h, f) // Z2bar
	dualCorrect(s.z2bar, s.zbar, s.x2, s.g2, s.eta, s.a, k, h, f)
	p.residualLN(hd, out, q, s.z2bar)

	etaLast := s.eta[(k-1)*k:]
	update(s.w1, s.b1, kx, s.g1, etaLast, k, f, h)
	update(s.w2, s.b2, s.x2, s.g2, etaLast, k, h, f)
}
