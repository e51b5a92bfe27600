package ttt

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestOpGradientsMatchFiniteDifferences checks every operation's
// derivative on its own, without the reference: the gradient Backward
// gives for loss = sum(out * r) against central differences of the loss.
func TestOpGradientsMatchFiniteDifferences(t *testing.T) {
	type build func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64]
	tokens := []int32{3, 1, 4, 1, 5, 2}
	for _, tc := range []struct {
		name   string
		shapes [][3]int // the operands' [N, R, C]
		f      build
	}{
		{"add broadcast row", [][3]int{{2, 3, 4}, {1, 1, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Add(x[0], x[1]) }},
		{"sub broadcast column", [][3]int{{2, 3, 4}, {2, 3, 1}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Sub(x[0], x[1]) }},
		{"mul broadcast batch", [][3]int{{2, 3, 4}, {1, 3, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Mul(x[0], x[1]) }},
		{"mul by itself", [][3]int{{1, 3, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Mul(x[0], x[0]) }},
		{"div", [][3]int{{2, 3, 4}, {2, 3, 1}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.Div(x[0], tp.Shift(tp.Mul(x[1], x[1]), 1))
		}},
		{"gelu", [][3]int{{1, 3, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Map(x[0], gelu, geluGrad) }},
		{"gelu'", [][3]int{{1, 3, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.Map(x[0], geluGrad, geluGrad2)
		}},
		{"silu", [][3]int{{1, 3, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Map(x[0], silu, siluGrad) }},
		{"sigmoid", [][3]int{{1, 3, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.Map(x[0], sigmoid, sigmoidGrad)
		}},
		{"sums", [][3]int{{2, 3, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.Mul(tp.SumCols(x[0]), tp.SumRows(x[0]))
		}},
		{"matmul", [][3]int{{2, 3, 4}, {2, 4, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.MatMul(x[0], x[1], false, false)
		}},
		{"matmul a^T", [][3]int{{2, 4, 3}, {2, 4, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.MatMul(x[0], x[1], true, false)
		}},
		{"matmul b^T", [][3]int{{2, 3, 4}, {2, 5, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.MatMul(x[0], x[1], false, true)
		}},
		{"matmul a^T b^T", [][3]int{{1, 4, 3}, {1, 5, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.MatMul(x[0], x[1], true, true)
		}},
		{"matmul shared weight", [][3]int{{3, 2, 4}, {1, 4, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.MatMul(x[0], x[1], false, false)
		}},
		{"layout", [][3]int{{1, 6, 8}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			heads := tp.SplitHeads(x[0], 2, 4)                                                           // [8, 3, 2]
			parts := tp.ConcatRows([]*Tensor[float64]{tp.Rows(heads, 1, 3), tp.Rows(heads, 0, 1)})       // rows rotated
			twice := tp.Rows(tp.Reshape(tp.Repeat(tp.Transpose(tp.Transpose(heads)), 2), 8, 6, 2), 2, 5) // [8, 3, 2]
			return tp.Mul(tp.MergeHeads(parts, 2, 4), tp.MergeHeads(twice, 2, 4))
		}},
		{"embed", [][3]int{{1, 6, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Embed(x[0], tokens) }},
		{"norms", [][3]int{{1, 4, 6}, {1, 1, 6}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			xh, s := tp.LayerNorm(x[0])
			return tp.Add(tp.RMSNorm(x[0], x[1]), tp.Mul(xh, s))
		}},
		{"rope", [][3]int{{2, 6, 4}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] { return tp.Rope(x[0], 3) }},
		{"causal conv", [][3]int{{1, 10, 3}, {1, 3, 4}, {1, 1, 3}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.CausalConv(x[0], x[1], x[2], 5)
		}},
		{"cross-entropy", [][3]int{{1, 6, 7}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return tp.CrossEntropy(x[0], tokens, 3)
		}},
		{"ln l2 gradient", [][3]int{{2, 3, 5}, {2, 3, 5}, {1, 1, 5}, {1, 1, 5}}, func(tp *Tape[float64], x []*Tensor[float64]) *Tensor[float64] {
			return lnL2Grad(tp, x[0], x[1], x[2], x[3])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			vals := make([][]float64, len(tc.shapes))
			for i, s := range tc.shapes {
				vals[i] = make([]float64, s[0]*s[1]*s[2])
				for j := range vals[i] {
					vals[i][j] = r.NormFloat64()
				}
			}
			var weights []float64
			loss := func(record bool) (float64, []*Tensor[float64]) {
				tp := NewTape[float64](record)
				xs := make([]*Tensor[float64], len(vals))
				for i, s := range tc.shapes {
					xs[i] = tp.Param(s[0], s[1], s[2], vals[i])
				}
				out := tc.f(tp, xs)
				if weights == nil {
					weights = make([]float64, out.Len())
					for j := range weights {
						weights[j] = r.NormFloat64()
					}
				}
				l := tp.SumCols(tp.Reshape(tp.Mul(out, tp.Const(out.N, out.R, out.C, weights)), 1, 1, out.Len()))
				if record {
					tp.Backward(l)
				}
				return l.V[0], xs
			}
			_, xs := loss(true)
			const h = 1e-6
			for i := range vals {
				if xs[i].G == nil {
					t.Fatalf("operand %d got no gradient", i)
				}
				for j := range vals[i] {
					v := vals[i][j]
					vals[i][j] = v + h
					up, _ := loss(false)
					vals[i][j] = v - h
					down, _ := loss(false)
					vals[i][j] = v
					fd := (up - down) / (2 * h)
					if got := xs[i].G[j]; math.Abs(got-fd) > 1e-6*(1+math.Abs(fd)) {
						t.Fatalf("operand %d element %d: gradient %g, finite difference %g", i, j, got, fd)
					}
				}
			}
		})
	}
}
