package ttt

import (
	"math"

	"github.com/xbench/xbench/harness/numeric"
)

// Spec constants (docs/workloads/ttt.md).
const (
	normEps   = 1e-6
	ropeTheta = 10000.0
	convWidth = 4
	geluScale = 0.7978845608028654 // sqrt(2/pi), gelu_tanh's
	geluCubic = 0.044715
)

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func sigmoidGrad(x float64) float64 { s := sigmoid(x); return s * (1 - s) }

func silu(x float64) float64 { return x * sigmoid(x) }

func siluGrad(x float64) float64 { s := sigmoid(x); return s * (1 + x*(1-s)) }

// gelu is the tanh approximation x/2 (1 + tanh(u)), u = c (x + a x^3).
func gelu(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(geluScale*(x+geluCubic*x*x*x)))
}

// geluGrad is gelu's derivative: (1 + t)/2 + x/2 (1 - t^2) u'.
func geluGrad(x float64) float64 {
	t := math.Tanh(geluScale * (x + geluCubic*x*x*x))
	du := geluScale * (1 + 3*geluCubic*x*x)
	return 0.5*(1+t) + 0.5*x*(1-t*t)*du
}

// geluGrad2 is geluGrad's derivative: (1 - t^2) (u' + x u”/2 - x t u'^2).
func geluGrad2(x float64) float64 {
	t := math.Tanh(geluScale * (x + geluCubic*x*x*x))
	du := geluScale * (1 + 3*geluCubic*x*x)
	ddu := geluScale * 6 * geluCubic * x
	return (1 - t*t) * (du + 0.5*x*ddu - x*t*du*du)
}

func relu(x float64) float64 { return math.Max(0, x) }

func step(x float64) float64 {
	if x > 0 {
		return 1
	}
	return 0
}

func rsqrt(x float64) float64     { return 1 / math.Sqrt(x) }
func rsqrtGrad(x float64) float64 { return -0.5 / (x * math.Sqrt(x)) }

// RMSNorm is x / sqrt(mean(x^2) + eps) * w over each row; w is [1, 1, C].
func (tp *Tape[T]) RMSNorm(x, w *Tensor[T]) *Tensor[T] {
	ms := tp.MeanCols(tp.Mul(x, x))
	return tp.Mul(tp.Mul(x, tp.Map(tp.Shift(ms, normEps), rsqrt, rsqrtGrad)), w)
}

// LayerNorm normalises each row to zero mean and unit (population)
// variance: it returns xh = (x - mu)/s and s = sqrt(var + eps), [.., 1].
func (tp *Tape[T]) LayerNorm(x *Tensor[T]) (xh, s *Tensor[T]) {
	d := tp.Sub(x, tp.MeanCols(x))
	s = tp.Map(tp.Shift(tp.MeanCols(tp.Mul(d, d)), normEps), math.Sqrt, func(v float64) float64 { return 0.5 / math.Sqrt(v) })
	return tp.Div(d, s), s
}

// Affine is x * w + b, w and b broadcast over rows.
func (tp *Tape[T]) Affine(x, w, b *Tensor[T]) *Tensor[T] { return tp.Add(tp.Mul(x, w), b) }

// Rope rotates the halves of each row of x [N, L, f] by the angle of the
// row's position in its mini-batch (rotate-half convention): x cos + rot(x) sin
// with rot(x) = (-x2, x1) for x = (x1, x2).
func (tp *Tape[T]) Rope(x *Tensor[T], miniBatch int) *Tensor[T] {
	L, f := x.R, x.C
	half := f / 2
	cos, sin := make([]T, L*f), make([]T, L*f)
	for t := 0; t < L; t++ {
		p := float64(t % miniBatch)
		for i := 0; i < half; i++ {
			a := p * math.Pow(ropeTheta, -2*float64(i)/float64(f))
			cos[t*f+i], cos[t*f+half+i] = T(math.Cos(a)), T(math.Cos(a))
			sin[t*f+i], sin[t*f+half+i] = T(-math.Sin(a)), T(math.Sin(a))
		}
	}
	swapped := tp.gather(x, x.N, L, f, func(e int) int { // (x2, x1)
		j := e % f
		if j < half {
			return e + half
		}
		return e - half
	}, true)
	return tp.Add(tp.Mul(x, tp.Const(1, L, f, cos)), tp.Mul(swapped, tp.Const(1, L, f, sin)))
}

// CausalConv is the depthwise causal convolution over each sequence of
// x [1, B*L, C]: y[t, c] = b[c] + sum_k w[c, k] x[t-3+k, c], x = 0 before the
// sequence starts; w is [1, C, 4], b [1, 1, C].
func (tp *Tape[T]) CausalConv(x, w, b *Tensor[T], seqLen int) *Tensor[T] {
	rows, C := x.R, x.C
	out := tp.result(1, rows, C, x, w, b)
	// tap returns the input row tap k of output row q reads, or -1.
	tap := func(q, k int) int {
		t := q%seqLen - (convWidth - 1) + k
		if t < 0 {
			return -1
		}
		return q - (convWidth - 1) + k
	}
	forRows(rows, func(q int) {
		for c := 0; c < C; c++ {
			s := b.V[c]
			for k := 0; k < convWidth; k++ {
				if src := tap(q, k); src >= 0 {
					s += w.V[c*convWidth+k] * x.V[src*C+c]
				}
			}
			out.V[q*C+c] = s
		}
	})
	if out.grad {
		out.back = func() {
			// Each worker owns a range of channels: every gradient it writes
			// is its own, summed over rows in order.
			const chunk = 16
			var dx, dw, db []T // allocated here, before the workers share them
			if x.grad {
				dx = x.gradBuf()
			}
			if w.grad {
				dw = w.gradBuf()
			}
			if b.grad {
				db = b.gradBuf()
			}
			numeric.ParallelFor((C+chunk-1)/chunk, func(_, ch int) {
				for c := ch * chunk; c < min((ch+1)*chunk, C); c++ {
					for q := 0; q < rows; q++ {
						g := out.G[q*C+c]
						if db != nil {
							db[c] += g
						}
						for k := 0; k < convWidth; k++ {
							src := tap(q, k)
							if src < 0 {
								continue
							}
							if dw != nil {
								dw[c*convWidth+k] += g * x.V[src*C+c]
							}
							if dx != nil {
								dx[src*C+c] += g * w.V[c*convWidth+k]
							}
						}
					}
				}
			})
		}
	}
	return out
}

// CrossEntropy is the mean next-token cross-entropy of logits [1, B*L, V]:
// the label of row q is tokens[q+1], and the last row of each sequence has
// none; the mean is over the B*(L-1) labelled rows. It sums in float64.
func (tp *Tape[T]) CrossEntropy(logits *Tensor[T], tokens []int32, seqLen int) *Tensor[T] {
	rows, V := logits.R, logits.C
	out := tp.result(1, 1, 1, logits)
	labelled := rows - rows/seqLen
	lse := make([]float64, rows)
	per := make([]float64, rows)
	forRows(rows, func(q int) {
		if q%seqLen == seqLen-1 {
			return
		}
		x := logits.V[q*V : (q+1)*V]
		top := math.Inf(-1)
		for _, v := range x {
			top = math.Max(top, float64(v))
		}
		var sum float64
		for _, v := range x {
			sum += math.Exp(float64(v) - top)
		}
		lse[q] = top + math.Log(sum)
		per[q] = lse[q] - float64(x[tokens[q+1]])
	})
	var total float64
	for _, v := range per {
		total += v
	}
	out.V[0] = T(total / float64(labelled))
	if out.grad {
		out.back = func() {
			dst := logits.gradBuf()
			scale := float64(out.G[0]) / float64(labelled)
			forRows(rows, func(q int) {
				if q%seqLen == seqLen-1 {
					return
				}
				x, d := logits.V[q*V:(q+1)*V], dst[q*V:(q+1)*V]
				for i, v := range x {
					d[i] += T(math.Exp(float64(v)-lse[q]) * scale)
				}
				d[tokens[q+1]] -= T(scale)
			})
		}
	}
	return out
}
