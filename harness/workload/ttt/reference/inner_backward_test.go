package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// asF64 converts every tensor of w to F64, so a finite difference can move
// one element by a step float32 would round away.
func asF64(t testing.TB, w map[string]tensorfile.Tensor) map[string]tensorfile.Tensor {
	t.Helper()
	out := make(map[string]tensorfile.Tensor, len(w))
	for name, x := range w {
		v, err := x.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		out[name] = tensorfile.F64(x.Shape, v)
	}
	return out
}

// nudged returns w with element i of tensor name moved by delta (a new
// map; the other tensors are shared).
func nudged(w map[string]tensorfile.Tensor, name string, i int, delta float64) map[string]tensorfile.Tensor {
	out := make(map[string]tensorfile.Tensor, len(w))
	for k, v := range w {
		out[k] = v
	}
	v, _ := w[name].Float64s()
	v[i] += delta
	out[name] = tensorfile.F64(w[name].Shape, v)
	return out
}

// probe picks which elements of an n-element tensor a finite-difference
// test checks: all of a small one, a few random ones of a large one.
func probe(r *rand.Rand, n, all, some int) []int {
	if n <= all {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, some)
	for i := range idx {
		idx[i] = r.IntN(n)
	}
	return idx
}

// fdCheck compares an analytic gradient element with the central finite
// difference of loss, relative to the largest gradient element of its
// tensor (scale): elements near zero are held to the tensor's scale.
func fdCheck(t *testing.T, what string, analytic, scale float64, loss func(delta float64) float64, step, tol float64) {
	t.Helper()
	fd := (loss(step) - loss(-step)) / (2 * step)
	if err := math.Abs(fd - analytic); err > tol*math.Max(scale, math.Abs(fd)) || math.IsNaN(analytic) {
		t.Errorf("%s: analytic %.12g, finite difference %.12g (error %.3g, %.3g of the tensor's scale %.3g)",
			what, analytic, fd, err, err/scale, scale)
	}
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// TestInnerBackwardFiniteDifferences checks Inner.Backward against central
// differences of loss = sum(dout * out) for the inputs and every inner
// parameter, on several mini-batches, with a base learning rate large
// enough that the in-mini-batch and carried updates matter.
func TestInnerBackwardFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		tttType          string
		batch, seqLen, k int
	}{
		{"linear", 2, 32, 8}, {"mlp", 1, 24, 8}, {"linear", 1, 32, 16},
	} {
		t.Run(fmt.Sprintf("%s/B%d/L%d/K%d", tc.tttType, tc.batch, tc.seqLen, tc.k), func(t *testing.T) {
			s, _ := ttt.LookupSize("tiny")
			w := asF64(t, ttt.InitParams(ttt.InnerParams(s, tc.tttType, tc.k), 3, true))
			build := func(w map[string]tensorfile.Tensor) *Inner[float64] {
				p, err := NewInner[float64](w, "layers.0.ttt.", s.Heads, s.HeadDim, tc.k, tc.tttType == "mlp", 2)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			in := map[string][]float64{}
			for name, x := range ttt.RandomInnerInputs(5, tc.batch, s.Heads, tc.seqLen, s.HeadDim) {
				in[name] = decodeAs[float64](t, x)
			}
			r := rand.New(rand.NewPCG(1, 2))
			dout := make([]float64, len(in["xq"]))
			for i := range dout {
				dout[i] = r.NormFloat64()
			}
			loss := func(p *Inner[float64], in map[string][]float64) float64 {
				out := make([]float64, len(dout))
				p.Run(out, in["xq"], in["xk"], in["xv"], in["gate"], tc.batch, tc.seqLen)
				return numeric.Dot(out, dout)
			}

			p := build(w)
			g := p.NewInnerGrads()
			d := map[string][]float64{}
			for name, x := range in {
				d[name] = make([]float64, len(x))
			}
			p.Backward(g, d["xq"], d["xk"], d["xv"], d["gate"], dout, in["xq"], in["xk"], in["xv"], in["gate"], tc.batch, tc.seqLen)

			const step, tol = 1e-6, 1e-6
			for _, name := range []string{"xq", "xk", "xv", "gate"} {
				for _, i := range probe(r, len(in[name]), 0, 8) {
					fdCheck(t, fmt.Sprintf("d%s[%d]", name, i), d[name][i], maxAbs(d[name]), func(delta float64) float64 {
						x := map[string][]float64{}
						for k, v := range in {
							x[k] = v
						}
						x[name] = append([]float64(nil), in[name]...)
						x[name][i] += delta
						return loss(p, x)
					}, step, tol)
				}
			}
			params := map[string][]float64{"W1": g.W1, "b1": g.B1, "W2": g.W2, "b2": g.B2, "ln_w": g.LnW, "ln_b": g.LnB, "tok_delta": g.TokDelta}
			for _, prm := range ttt.InnerParams(s, tc.tttType, tc.k) {
				short := strings.TrimPrefix(prm.Name, "layers.0.ttt.")
				grad := params[short]
				if len(grad) != prm.Elements() {
					t.Fatalf("grad %s has %d elements, want %d", short, len(grad), prm.Elements())
				}
				for _, i := range probe(r, len(grad), 16, 8) {
					fdCheck(t, fmt.Sprintf("d%s[%d]", short, i), grad[i], maxAbs(grad), func(delta float64) float64 {
						return loss(build(nudged(w, prm.Name, i, delta)), in)
					}, step, tol)
				}
			}
		})
	}
}
