package reference

import (
	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// causalConv is the mamba backbone's depthwise causal convolution of width
// ttt.ConvWidth over the positions of each sequence:
// y[t, c] = b[c] + sum_k w[c, k] * x[t-3+k, c], with x = 0 before the
// sequence starts (spec, "--backbone mamba").
type causalConv[T Float] struct {
	w []T // [C, ConvWidth], as stored
	b []T // [C]
}

func (cv causalConv[T]) numParams() int { return len(cv.w) + len(cv.b) }

// apply sets y = conv(x) for x, y [batch*seqLen, C], rows in parallel.
func (cv causalConv[T]) apply(y, x []T, seqLen, rows int) {
	const kw = ttt.ConvWidth
	C := len(cv.b)
	parallelRows(rows, func(row int) {
		t := row % seqLen
		out := y[row*C : (row+1)*C]
		copy(out, cv.b)
		for k := max(0, kw-1-t); k < kw; k++ { // taps before the sequence read zeros
			in := x[(row-(kw-1)+k)*C : (row-(kw-1)+k+1)*C]
			for c, v := range in {
				out[c] += cv.w[c*kw+k] * v
			}
		}
	})
}

// backward adds the convolution's gradients for dy, given its input x:
// dx[t, c] = sum_k dy[t+3-k, c] w[c, k] is written (not added) into dx;
// dw[c, k] += sum_t dy[t, c] x[t-3+k, c] and db[c] += sum_t dy[t, c].
func (cv causalConv[T]) backward(dx, dw, db, dy, x []T, seqLen, rows int) {
	const kw = ttt.ConvWidth
	C := len(cv.b)
	parallelRows(rows, func(row int) {
		t := row % seqLen
		out := dx[row*C : (row+1)*C]
		clear(out)
		for k := max(0, t+kw-seqLen); k < kw; k++ { // outputs past the sequence's end do not exist
			src := dy[(row+kw-1-k)*C : (row+kw-k)*C]
			for c, v := range src {
				out[c] += cv.w[c*kw+k] * v
			}
		}
	})
	// Each channel's sums are one work item, so the order of every sum is
	// fixed whatever runs it.
	numeric.ParallelFor(C, func(_, c int) {
		var sb T
		var sw [kw]T
		for row := 0; row < rows; row++ {
			g := dy[row*C+c]
			sb += g
			t := row % seqLen
			for k := max(0, kw-1-t); k < kw; k++ {
				sw[k] += g * x[(row-(kw-1)+k)*C+c]
			}
		}
		db[c] += sb
		for k := range sw {
			dw[c*kw+k] += sw[k]
		}
	})
}
