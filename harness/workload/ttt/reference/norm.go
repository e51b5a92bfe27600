package reference

import "github.com/xbench/xbench/harness/numeric"

// rmsNormRow sets y = x / sqrt(mean(x^2) + eps) * w for one row.
func rmsNormRow[T Float](y, x, w []T) {
	var ss T
	for _, v := range x {
		ss += v * v
	}
	r := 1 / sqrt(ss/T(len(x))+eps)
	w, y = w[:len(x)], y[:len(x)]
	for i, v := range x {
		y[i] = v * r * w[i]
	}
}

// rmsNorm normalises each of the rows of x [rows, len(w)] into y, in parallel.
func rmsNorm[T Float](y, x, w []T, rows int) {
	c := len(w)
	parallelRows(rows, func(i int) { rmsNormRow(y[i*c:(i+1)*c], x[i*c:(i+1)*c], w) })
}

// meanStd returns a row's mean and sqrt(population variance + eps). Two
// passes: the one-pass E[x^2]-E[x]^2 form cancels badly in float32.
func meanStd[T Float](x []T) (mu, s T) {
	for _, v := range x {
		mu += v
	}
	mu /= T(len(x))
	var vr T
	for _, v := range x {
		d := v - mu
		vr += d * d
	}
	return mu, sqrt(vr/T(len(x)) + eps)
}

// layerNormRow sets y = w * (x - mean) / s + b; y may alias x.
func layerNormRow[T Float](y, x, w, b []T) {
	mu, s := meanStd(x)
	r := 1 / s
	w, b, y = w[:len(x)], b[:len(x)], y[:len(x)]
	for i, v := range x {
		y[i] = w[i]*((v-mu)*r) + b[i]
	}
}

// lnL2Grad sets g = dLoss/dz for Loss = 1/2 sum((LN(z) - target)^2), LN a
// LayerNorm with weight w and bias b, for one row (spec step 5):
//
//	xh = (z - mu)/s, y = w*xh + b, gh = (y - target)*w,
//	g  = (f*gh - sum(gh) - xh*sum(gh*xh)) / (f*s)
//
// xh is scratch of the row's length; g may not alias z or target.
func lnL2Grad[T Float](g, z, target, w, b, xh []T) {
	f := len(z)
	mu, s := meanStd(z)
	r := 1 / s
	g, target, w, b, xh = g[:f], target[:f], w[:f], b[:f], xh[:f]
	var sg, sgx T
	for i, v := range z {
		x := (v - mu) * r
		gh := (w[i]*x + b[i] - target[i]) * w[i]
		xh[i], g[i] = x, gh
		sg += gh
		sgx += gh * x
	}
	ff := T(f)
	scale := 1 / (ff * s)
	for i := range g {
		g[i] = (ff*g[i] - sg - xh[i]*sgx) * scale
	}
}

// parallelRows runs fn for every row in chunks, enough rows per chunk that
// the goroutine hand-off costs little next to the row work.
func parallelRows(rows int, fn func(i int)) {
	const chunk = 16
	numeric.ParallelFor((rows+chunk-1)/chunk, func(_, c int) {
		for i := c * chunk; i < min((c+1)*chunk, rows); i++ {
			fn(i)
		}
	})
}
