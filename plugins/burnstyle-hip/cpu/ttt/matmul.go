package ttt

import (
	"fmt"

	"github.com/xbench/xbench/harness/numeric"
)

// MatMul is the batched product op(a) @ op(b), op transposing the last two
// dimensions when ta (tb) is set. a and b hold the same number of matrices,
// or b holds one that every matrix of a uses (a weight).
func (tp *Tape[T]) MatMul(a, b *Tensor[T], ta, tb bool) *Tensor[T] {
	m, k := a.R, a.C
	if ta {
		m, k = k, m
	}
	kb, n := b.R, b.C
	if tb {
		kb, n = n, kb
	}
	if k != kb || (a.N != b.N && b.N != 1) {
		panic(fmt.Sprintf("MatMul: [%d %d %d] by [%d %d %d] (transposed %v %v)", a.N, a.R, a.C, b.N, b.R, b.C, ta, tb))
	}
	if b.N == 1 && a.N > 1 {
		if ta {
			panic("MatMul: a transposed batch against one shared matrix (repeat it first)")
		}
		// One weight for every matrix: a is one [N*R, C] matrix.
		flat := tp.Reshape(a, 1, a.N*a.R, a.C)
		return tp.Reshape(tp.MatMul(flat, b, false, tb), a.N, a.R, n)
	}
	out := tp.result(a.N, m, n, a, b)
	product(out.V, a.V, b.V, a.N, m, k, n, ta, tb, false)
	if out.grad {
		out.back = func() {
			// C = A B: dA = dC B^T, dB = A^T dC, each read through the
			// operands' stored layouts.
			if a.grad {
				if ta {
					product(a.gradBuf(), b.V, out.G, a.N, k, n, m, tb, true, true)
				} else {
					product(a.gradBuf(), out.G, b.V, a.N, m, n, k, false, !tb, true)
				}
			}
			if b.grad {
				if tb {
					product(b.gradBuf(), out.G, a.V, a.N, n, m, k, true, ta, true)
				} else {
					product(b.gradBuf(), a.V, out.G, a.N, k, m, n, !ta, false, true)
				}
			}
		}
	}
	return out
}

// product sets (or, with accumulate, adds to) c[i] = op(a[i]) @ op(b[i])
// for each of batch matrices, op(a) [m, k] and op(b) [k, n]; a or b stored
// [k, m] or [n, k] when transposed.
func product[T Float](c, a, b []T, batch, m, k, n int, ta, tb, accumulate bool) {
	one := func(ci, ai, bi, tmpA, tmpB, tmpC []T, mul func(c, a, bt []T, m, k, n int)) {
		if ta {
			numeric.TransposeInto(tmpA, ai, k, m)
			ai = tmpA
		}
		if !tb {
			numeric.TransposeInto(tmpB, bi, k, n)
			bi = tmpB
		}
		if !accumulate {
			mul(ci, ai, bi, m, k, n)
			return
		}
		mul(tmpC, ai, bi, m, k, n)
		numeric.Axpy(ci, 1, tmpC)
	}
	// scratch is what one product needs beside its operands: the
	// transposes it makes and, when accumulating, the product itself.
	scratch := func() (sa, sb, sc []T) {
		if ta {
			sa = make([]T, m*k)
		}
		if !tb {
			sb = make([]T, k*n)
		}
		if accumulate {
			sc = make([]T, m*n)
		}
		return sa, sb, sc
	}
	if batch == 1 {
		sa, sb, sc := scratch()
		one(c, a, b, sa, sb, sc, numeric.MatMulNT[T])
		return
	}
	type buffers struct{ a, b, c []T }
	per := make([]*buffers, numeric.NumWorkers())
	numeric.ParallelFor(batch, func(w, i int) {
		if per[w] == nil {
			sa, sb, sc := scratch()
			per[w] = &buffers{sa, sb, sc}
		}
		s := per[w]
		one(c[i*m*n:(i+1)*m*n], a[i*m*k:(i+1)*m*k], b[i*k*n:(i+1)*k*n], s.a, s.b, s.c, numeric.GemmNT[T])
	})
}
