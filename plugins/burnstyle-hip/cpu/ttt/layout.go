package ttt

import "fmt"

// gather returns the tensor of shape [n, r, c] whose element e is x's
// element src(e). When src is one-to-one the backward runs in parallel;
// otherwise (an embedding lookup repeats rows) it sums in order.
func (tp *Tape[T]) gather(x *Tensor[T], n, r, c int, src func(e int) int, oneToOne bool) *Tensor[T] {
	out := tp.result(n, r, c, x)
	idx := make([]int32, n*r*c)
	forRows(n*r, func(q int) {
		for e := q * c; e < (q+1)*c; e++ {
			idx[e] = int32(src(e))
			out.V[e] = x.V[idx[e]]
		}
	})
	if out.grad {
		out.back = func() {
			dst := x.gradBuf()
			serialOrParallel(oneToOne, n*r, func(q int) {
				for e := q * c; e < (q+1)*c; e++ {
					dst[idx[e]] += out.G[e]
				}
			})
		}
	}
	return out
}

// Reshape reads x's elements in order as shape [n, r, c].
func (tp *Tape[T]) Reshape(x *Tensor[T], n, r, c int) *Tensor[T] {
	if n*r*c != x.Len() {
		panic(fmt.Sprintf("Reshape: [%d %d %d] to [%d %d %d]", x.N, x.R, x.C, n, r, c))
	}
	return tp.gather(x, n, r, c, func(e int) int { return e }, true)
}

// Transpose swaps each matrix's rows and columns.
func (tp *Tape[T]) Transpose(x *Tensor[T]) *Tensor[T] {
	return tp.gather(x, x.N, x.C, x.R, func(e int) int {
		i, rc := e/(x.R*x.C), e%(x.R*x.C)
		row, col := rc/x.R, rc%x.R // out is [C, R]
		return i*x.R*x.C + col*x.C + row
	}, true)
}

// Rows is rows [r0, r1) of every matrix.
func (tp *Tape[T]) Rows(x *Tensor[T], r0, r1 int) *Tensor[T] {
	r := r1 - r0
	return tp.gather(x, x.N, r, x.C, func(e int) int {
		i, rest := e/(r*x.C), e%(r*x.C)
		return (i*x.R+r0)*x.C + rest
	}, true)
}

// Repeat stacks times copies of x along N: out[t*N + i] = x[i].
func (tp *Tape[T]) Repeat(x *Tensor[T], times int) *Tensor[T] {
	size := x.Len()
	return tp.gather(x, times*x.N, x.R, x.C, func(e int) int { return e % size }, times == 1)
}

// ConcatRows joins matrices of equal N and C along R.
func (tp *Tape[T]) ConcatRows(xs []*Tensor[T]) *Tensor[T] {
	n, c, r := xs[0].N, xs[0].C, 0
	for _, x := range xs {
		if x.N != n || x.C != c {
			panic("ConcatRows: parts differ in N or C")
		}
		r += x.R
	}
	out := tp.result(n, r, c, xs...)
	at := 0
	for _, x := range xs {
		for i := 0; i < n; i++ {
			copy(out.V[(i*r+at)*c:(i*r+at+x.R)*c], x.V[i*x.R*c:(i+1)*x.R*c])
		}
		at += x.R
	}
	if out.grad {
		out.back = func() {
			at := 0
			for _, x := range xs {
				if x.grad {
					dst := x.gradBuf()
					for i := 0; i < n; i++ {
						g := out.G[(i*r+at)*c : (i*r+at+x.R)*c]
						for k, v := range g {
							dst[i*x.R*c+k] += v
						}
					}
				}
				at += x.R
			}
		}
	}
	return out
}

// SplitHeads turns [1, B*L, heads*f] (token rows, heads side by side) into
// [B*heads, L, f], one matrix per (sequence, head).
func (tp *Tape[T]) SplitHeads(x *Tensor[T], batch, heads int) *Tensor[T] {
	L, f := x.R/batch, x.C/heads
	return tp.gather(x, batch*heads, L, f, func(e int) int {
		item, rest := e/(L*f), e%(L*f)
		b, h, t, j := item/heads, item%heads, rest/f, rest%f
		return (b*L+t)*x.C + h*f + j
	}, true)
}

// MergeHeads is SplitHeads' inverse: [B*heads, L, f] to [1, B*L, heads*f].
func (tp *Tape[T]) MergeHeads(x *Tensor[T], batch, heads int) *Tensor[T] {
	L, f := x.R, x.C
	C := heads * f
	return tp.gather(x, 1, batch*L, C, func(e int) int {
		row, col := e/C, e%C
		b, t, h, j := row/L, row%L, col/f, col%f
		return ((b*heads+h)*L+t)*f + j
	}, true)
}

// Embed looks up rows ids of table [1, V, C]: [1, len(ids), C].
func (tp *Tape[T]) Embed(table *Tensor[T], ids []int32) *Tensor[T] {
	C := table.C
	return tp.gather(table, 1, len(ids), C, func(e int) int { return int(ids[e/C])*C + e%C }, false)
}
