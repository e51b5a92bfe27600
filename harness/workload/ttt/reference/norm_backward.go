package reference

import "github.com/xbench/xbench/harness/numeric"

// The norms' backward (docs/ttt-backward.md, "Dense pieces" and "The
// backward of ℓ"). Row functions work on one row; the [rows, C] ones spread
// rows over cores and sum the weight gradients column by column, so every
// sum has a fixed order.

// normalizeRow sets xh = (x - mean)/s and returns s = sqrt(var + eps).
func normalizeRow[T Float](xh, x []T) T {
	mu, s := meanStd(x)
	r := 1 / s
	xh = xh[:len(x)]
	for i, v := range x {
		xh[i] = (v - mu) * r
	}
	return s
}

// lnBackRow sets dx = (d - mean(d) - xh*mean(d*xh)) / s: the gradient of a
// LayerNorm's input given d, the gradient with respect to its normalised
// xh (dy*w for y = w*xh + b). dx may alias d.
func lnBackRow[T Float](dx, d, xh []T, s T) {
	n := len(d)
	dx, xh = dx[:n], xh[:n]
	var sd, sdx T
	for i, v := range d {
		sd += v
		sdx += v * xh[i]
	}
	md, mdx := sd/T(n), sdx/T(n)
	r := 1 / s
	for i, v := range d {
		dx[i] = (v - md - xh[i]*mdx) * r
	}
}

// addColumnSums adds the column sums of m [rows, cols] into dst [cols],
// columns in parallel blocks, rows summed in order.
func addColumnSums[T Float](dst, m []T, rows, cols int) {
	const block = 16
	numeric.ParallelFor((cols+block-1)/block, func(_, b int) {
		c0, c1 := b*block, min((b+1)*block, cols)
		acc := make([]T, c1-c0)
		for r := 0; r < rows; r++ {
			for c, v := range m[r*cols+c0 : r*cols+c1] {
				acc[c] += v
			}
		}
		for c, v := range acc {
			dst[c0+c] += v
		}
	})
}

// rmsNormBack is the backward of y = RMSNorm(x) * w over [rows, len(w)]:
// it adds dx = r*(dy*w) - x*r^3*mean(dy*w*x) into dh (the residual
// stream's gradient) and sum_rows dy*x*r into dw. scratch holds rows*len(w).
func rmsNormBack[T Float](dh, dw, dy, x, w, scratch []T, rows int) {
	c := len(w)
	parallelRows(rows, func(i int) {
		xr, gr, dr, sr := x[i*c:(i+1)*c], dy[i*c:(i+1)*c], dh[i*c:(i+1)*c], scratch[i*c:(i+1)*c]
		var ss, sdx T
		for j, v := range xr {
			ss += v * v
			sdx += gr[j] * w[j] * v
		}
		r := 1 / sqrt(ss/T(c)+eps)
		k := r * r * r * sdx / T(c)
		for j, v := range xr {
			dr[j] += r*gr[j]*w[j] - v*k
			sr[j] = gr[j] * v * r
		}
	})
	addColumnSums(dw, scratch, rows, c)
}

// layerNormBack is the backward of y = LayerNorm(x) * w + b over
// [rows, len(w)]: it sets dx and adds sum_rows dy*xh into dw and sum_rows
// dy into db. scratch holds rows*len(w).
func layerNormBack[T Float](dx, dw, db, dy, x, w, scratch []T, rows int) {
	c := len(w)
	parallelRows(rows, func(i int) {
		xh, d, g := scratch[i*c:(i+1)*c], dx[i*c:(i+1)*c], dy[i*c:(i+1)*c]
		s := normalizeRow(xh, x[i*c:(i+1)*c])
		for j, v := range g {
			d[j] = v * w[j]
		}
		lnBackRow(d, d, xh, s)
		for j, v := range g {
			xh[j] *= v // now dy*xh, for dw
		}
	})
	addColumnSums(dw, scratch, rows, c)
	addColumnSums(db, dy, rows, c)
}

// lnL2GradBack is the backward of one row of g = lnL2Grad(z, target, w, b):
// given dg it sets dz and dtarget and adds into dw, db (the inner
// LayerNorm's weight and bias). xh and r are scratch of the row's length.
//
// Forward: xh = (z-mu)/s, r = (w*xh + b - target)*w, c = mean(r*xh),
// g = (r - mean(r) - xh*c)/s. g is itself the LayerNorm backward of r, so
// u = dg/s goes back to dr by the same operator; the other terms are g's
// own dependence on xh (through r and c) and on s.
func lnL2GradBack[T Float](dz, dtarget, dw, db, dg, z, target, w, b, xh, r []T) {
	f := len(z)
	ff := T(f)
	s := normalizeRow(xh, z)
	dz, dtarget, dw, db, dg, target, w, b, xh, r = dz[:f], dtarget[:f], dw[:f], db[:f], dg[:f], target[:f], w[:f], b[:f], xh[:f], r[:f]
	var sr, srx, su, sux T
	for i, x := range xh {
		ri := (w[i]*x + b[i] - target[i]) * w[i]
		r[i] = ri
		sr += ri
		srx += ri * x
		u := dg[i] / s
		su += u
		sux += u * x
	}
	a, c, mu, mux := sr/ff, srx/ff, su/ff, sux/ff
	var ds T
	for i, x := range xh {
		u := dg[i] / s
		g := (r[i] - a - x*c) / s
		ds -= u * g
		dr := u - mu - x*mux
		dw[i] += dr * (2*w[i]*x + b[i] - target[i])
		db[i] += dr * w[i]
		dtarget[i] = -dr * w[i]
		dz[i] = w[i]*w[i]*dr - c*u - mux*r[i] // d loss / d xh, for now
	}
	lnBackRow(dz, dz, xh, s)
	k := ds / ff
	for i, x := range xh {
		dz[i] += k * x
	}
}
