package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/numeric"
)

// rowChunk is how many matrix rows one parallel work item covers.
const rowChunk = 64

// forRows calls fn(q) for every row q in [0, rows), in parallel chunks.
func forRows(rows int, fn func(q int)) {
	numeric.ParallelFor((rows+rowChunk-1)/rowChunk, func(_, c int) {
		for q := c * rowChunk; q < min((c+1)*rowChunk, rows); q++ {
			fn(q)
		}
	})
}

// strides3 are an operand's element strides along N, R and C within a
// result of shape [n, r, c]: 0 along a dimension of size 1 it is
// broadcast over.
type strides3 struct{ n, r, c int }

func broadcastStrides[T Float](x *Tensor[T], n, r, c int) strides3 {
	fit := func(d, want int) bool { return d == want || d == 1 }
	if !fit(x.N, n) || !fit(x.R, r) || !fit(x.C, c) {
		panic(fmt.Sprintf("broadcast: [%d %d %d] does not broadcast to [%d %d %d]", x.N, x.R, x.C, n, r, c))
	}
	s := strides3{}
	if x.N > 1 {
		s.n = x.R * x.C
	}
	if x.R > 1 {
		s.r = x.C
	}
	if x.C > 1 {
		s.c = 1
	}
	return s
}

type binaryOp int

const (
	opAdd binaryOp = iota
	opSub
	opMul
	opDiv
)

func (op binaryOp) apply(x, y float64) float64 {
	switch op {
	case opAdd:
		return x + y
	case opSub:
		return x - y
	case opMul:
		return x * y
	}
	return x / y
}

// partials are d(x op y)/dx and d(x op y)/dy.
func (op binaryOp) partials(x, y float64) (float64, float64) {
	switch op {
	case opAdd:
		return 1, 1
	case opSub:
		return 1, -1
	case opMul:
		return y, x
	}
	return 1 / y, -x / (y * y)
}

// Add, Sub, Mul and Div are elementwise, broadcasting any dimension of size 1.
func (tp *Tape[T]) Add(a, b *Tensor[T]) *Tensor[T] { return tp.binary(opAdd, a, b) }
func (tp *Tape[T]) Sub(a, b *Tensor[T]) *Tensor[T] { return tp.binary(opSub, a, b) }
func (tp *Tape[T]) Mul(a, b *Tensor[T]) *Tensor[T] { return tp.binary(opMul, a, b) }
func (tp *Tape[T]) Div(a, b *Tensor[T]) *Tensor[T] { return tp.binary(opDiv, a, b) }

func (tp *Tape[T]) binary(op binaryOp, a, b *Tensor[T]) *Tensor[T] {
	n, r, c := max(a.N, b.N), max(a.R, b.R), max(a.C, b.C)
	sa, sb := broadcastStrides(a, n, r, c), broadcastStrides(b, n, r, c)
	out := tp.result(n, r, c, a, b)
	forRows(n*r, func(q int) {
		i, j := q/r, q%r
		pa, pb := i*sa.n+j*sa.r, i*sb.n+j*sb.r
		o := out.V[q*c : (q+1)*c]
		for k := range o {
			o[k] = T(op.apply(float64(a.V[pa+k*sa.c]), float64(b.V[pb+k*sb.c])))
		}
	})
	if out.grad {
		out.back = func() {
			for side, x := range []*Tensor[T]{a, b} {
				if !x.grad {
					continue
				}
				s, dst := sa, x.gradBuf()
				if side == 1 {
					s = sb
				}
				each := func(q int) {
					i, j := q/r, q%r
					pa, pb := i*sa.n+j*sa.r, i*sb.n+j*sb.r
					px := i*s.n + j*s.r
					g := out.G[q*c : (q+1)*c]
					for k := range g {
						da, db := op.partials(float64(a.V[pa+k*sa.c]), float64(b.V[pb+k*sb.c]))
						d := da
						if side == 1 {
							d = db
						}
						dst[px+k*s.c] += T(float64(g[k]) * d)
					}
				}
				serialOrParallel(x.N == n && x.R == r, n*r, each)
			}
		}
	}
	return out
}

// serialOrParallel runs each over the rows in parallel when every row
// writes its own part of the gradient, else in order (a broadcast operand's
// gradient sums over rows, and a fixed order keeps it reproducible).
func serialOrParallel(rowsOwnTheirOutput bool, rows int, each func(q int)) {
	if rowsOwnTheirOutput {
		forRows(rows, each)
		return
	}
	for q := 0; q < rows; q++ {
		each(q)
	}
}

// Map applies f elementwise; df is its derivative.
func (tp *Tape[T]) Map(x *Tensor[T], f, df func(float64) float64) *Tensor[T] {
	out := tp.result(x.N, x.R, x.C, x)
	forRows(x.N*x.R, func(q int) {
		for k := q * x.C; k < (q+1)*x.C; k++ {
			out.V[k] = T(f(float64(x.V[k])))
		}
	})
	if out.grad {
		out.back = func() {
			dst := x.gradBuf()
			forRows(x.N*x.R, func(q int) {
				for k := q * x.C; k < (q+1)*x.C; k++ {
					dst[k] += T(float64(out.G[k]) * df(float64(x.V[k])))
				}
			})
		}
	}
	return out
}

// Scale is s * x.
func (tp *Tape[T]) Scale(x *Tensor[T], s float64) *Tensor[T] {
	return tp.Map(x, func(v float64) float64 { return s * v }, func(float64) float64 { return s })
}

// Shift is x + s.
func (tp *Tape[T]) Shift(x *Tensor[T], s float64) *Tensor[T] {
	return tp.Map(x, func(v float64) float64 { return v + s }, func(float64) float64 { return 1 })
}

// SumCols sums each row: [N, R, C] to [N, R, 1].
func (tp *Tape[T]) SumCols(x *Tensor[T]) *Tensor[T] {
	out := tp.result(x.N, x.R, 1, x)
	forRows(x.N*x.R, func(q int) {
		var s T
		for _, v := range x.V[q*x.C : (q+1)*x.C] {
			s += v
		}
		out.V[q] = s
	})
	if out.grad {
		out.back = func() {
			dst := x.gradBuf()
			forRows(x.N*x.R, func(q int) {
				for k := q * x.C; k < (q+1)*x.C; k++ {
					dst[k] += out.G[q]
				}
			})
		}
	}
	return out
}

// MeanCols averages each row: [N, R, C] to [N, R, 1].
func (tp *Tape[T]) MeanCols(x *Tensor[T]) *Tensor[T] {
	return tp.Scale(tp.SumCols(x), 1/float64(x.C))
}

// SumRows sums each matrix's rows: [N, R, C] to [N, 1, C].
func (tp *Tape[T]) SumRows(x *Tensor[T]) *Tensor[T] {
	out := tp.result(x.N, 1, x.C, x)
	numeric.ParallelFor(x.N, func(_, i int) {
		o := out.V[i*x.C : (i+1)*x.C]
		for j := 0; j < x.R; j++ {
			numeric.Axpy(o, 1, x.V[(i*x.R+j)*x.C:(i*x.R+j+1)*x.C])
		}
	})
	if out.grad {
		out.back = func() {
			dst := x.gradBuf()
			forRows(x.N*x.R, func(q int) {
				i := q / x.R
				numeric.Axpy(dst[q*x.C:(q+1)*x.C], 1, out.G[i*x.C:(i+1)*x.C])
			})
		}
	}
	return out
}
