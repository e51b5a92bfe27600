package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// naiveLN is LayerNorm written out plainly, for the references below.
func naiveLN(z, w, b []float64) []float64 {
	f := float64(len(z))
	var mu, vr float64
	for _, v := range z {
		mu += v / f
	}
	for _, v := range z {
		vr += (v - mu) * (v - mu) / f
	}
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = w[i]*(v-mu)/math.Sqrt(vr+eps) + b[i]
	}
	return out
}

func TestLNL2GradFiniteDifferences(t *testing.T) {
	tests := []struct {
		f          int
		zScale     float64
		wMean, wSd float64
	}{
		{4, 1, 1, 0}, {16, 0.1, 1, 0.1}, {16, 3, 0.5, 0.3}, {64, 1, 1, 0.1},
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, tc := range tests {
		t.Run(fmt.Sprintf("f=%d,z=%g", tc.f, tc.zScale), func(t *testing.T) {
			z, target, w, b := make([]float64, tc.f), make([]float64, tc.f), make([]float64, tc.f), make([]float64, tc.f)
			for i := range z {
				z[i] = tc.zScale * r.NormFloat64()
				target[i] = r.NormFloat64()
				w[i] = tc.wMean + tc.wSd*r.NormFloat64()
				b[i] = 0.1 * r.NormFloat64()
			}
			loss := func(z []float64) float64 {
				var l float64
				for i, y := range naiveLN(z, w, b) {
					l += 0.5 * (y - target[i]) * (y - target[i])
				}
				return l
			}
			g := make([]float64, tc.f)
			lnL2Grad(g, z, target, w, b, make([]float64, tc.f))
			h := 1e-5 * tc.zScale
			for i := range z {
				zp, zm := append([]float64(nil), z...), append([]float64(nil), z...)
				zp[i] += h
				zm[i] -= h
				fd := (loss(zp) - loss(zm)) / (2 * h)
				if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(fd))/tc.zScale {
					t.Errorf("dL/dz[%d] = %g, finite difference %g", i, g[i], fd)
				}
			}
		})
	}
}

// primalInner is the reference the dual form must match: for token i of a
// mini-batch, with G computed at the mini-batch's starting weights,
// W_i = W0 - sum_{j<=i} eta[i,j] Kx_j^T G_j (and likewise b, W2, b2), and the
// output uses W_i explicitly. It works on one (sequence, head) in float64.
func primalInner(p *Inner[float64], hd int, q, kx, vx, gate []float64, seqLen int) []float64 {
	f, h, K := p.F, p.Hidden, p.K
	lnW, lnB := p.lnW[hd*f:(hd+1)*f], p.lnB[hd*f:(hd+1)*f]
	w1 := append([]float64(nil), p.w1[hd*f*h:(hd+1)*f*h]...)
	b1 := append([]float64(nil), p.b1[hd*h:(hd+1)*h]...)
	var w2, b2 []float64
	if p.MLP {
		w2 = append([]float64(nil), p.w2[hd*h*f:(hd+1)*h*f]...)
		b2 = append([]float64(nil), p.b2[hd*f:(hd+1)*f]...)
	}
	vecMat := func(x, w []float64, b []float64, in, out int) []float64 {
		y := append([]float64(nil), b...)
		for c := 0; c < out; c++ {
			for a := 0; a < in; a++ {
				y[c] += x[a] * w[a*out+c]
			}
		}
		return y
	}
	out := make([]float64, seqLen*f)
	for n := 0; n < seqLen/K; n++ {
		row := func(x []float64, i, width int) []float64 { return x[(n*K+i)*width : (n*K+i+1)*width] }
		eta := func(i, j int) float64 { return p.baseLR * p.tok[i] * gate[n*K+j] / float64(f) }
		// Gradients at the starting weights.
		g1 := make([][]float64, K) // G (linear) or G1
		g2 := make([][]float64, K)
		x2 := make([][]float64, K)
		for j := 0; j < K; j++ {
			target := make([]float64, f)
			for c := range target {
				target[c] = row(vx, j, f)[c] - row(kx, j, f)[c]
			}
			z1 := vecMat(row(kx, j, f), w1, b1, f, h)
			if !p.MLP {
				g1[j] = make([]float64, f)
				lnL2Grad(g1[j], z1, target, lnW, lnB, make([]float64, f))
				continue
			}
			x2[j] = make([]float64, h)
			for c := range z1 {
				x2[j][c] = gelu(z1[c])
			}
			z2 := vecMat(x2[j], w2, b2, h, f)
			g2[j] = make([]float64, f)
			lnL2Grad(g2[j], z2, target, lnW, lnB, make([]float64, f))
			g1[j] = make([]float64, h)
			for c := 0; c < h; c++ {
				for d := 0; d < f; d++ {
					g1[j][c] += g2[j][d] * w2[c*f+d]
				}
				g1[j][c] *= geluGrad(z1[c])
			}
		}
		// Per-token weights: W_i = W0 - sum_{j<=i} eta[i,j] x_j^T g_j.
		weightsAt := func(w, b []float64, xs, gs [][]float64, i, in, out int) ([]float64, []float64) {
			wi, bi := append([]float64(nil), w...), append([]float64(nil), b...)
			for j := 0; j <= i; j++ {
				e := eta(i, j)
				for a := 0; a < in; a++ {
					for c := 0; c < out; c++ {
						wi[a*out+c] -= e * xs[j][a] * gs[j][c]
					}
				}
				for c := 0; c < out; c++ {
					bi[c] -= e * gs[j][c]
				}
			}
			return wi, bi
		}
		kxs := make([][]float64, K)
		for j := range kxs {
			kxs[j] = row(kx, j, f)
		}
		var nw1, nb1, nw2, nb2 []float64
		for i := 0; i < K; i++ {
			w1i, b1i := weightsAt(w1, b1, kxs, g1, i, f, h)
			z := vecMat(row(q, i, f), w1i, b1i, f, h)
			if p.MLP {
				for c := range z {
					z[c] = gelu(z[c])
				}
				w2i, b2i := weightsAt(w2, b2, x2, g2, i, h, f)
				z = vecMat(z, w2i, b2i, h, f)
				nw2, nb2 = w2i, b2i
			}
			ln := naiveLN(z, lnW, lnB)
			for c := range ln {
				out[(n*K+i)*f+c] = row(q, i, f)[c] + ln[c]
			}
			nw1, nb1 = w1i, b1i
		}
		w1, b1, w2, b2 = nw1, nb1, nw2, nb2 // the last token's weights carry on
	}
	return out
}

// innerFixture builds perturbed tiny inner parameters and random inputs.
func innerFixture[T Float](t testing.TB, tttType string, batch, seqLen, k int) (*Inner[T], map[string][]T) {
	t.Helper()
	s, _ := ttt.LookupSize("tiny")
	w := ttt.InitParams(ttt.InnerParams(s, tttType, k), 3, true)
	// A larger base learning rate than the spec's makes the in-mini-batch
	// updates big enough that a wrong term shows.
	p, err := NewInner[T](w, "layers.0.ttt.", s.Heads, s.HeadDim, k, tttType == "mlp", 2)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string][]T{}
	for name, x := range ttt.RandomInnerInputs(5, batch, s.Heads, seqLen, s.HeadDim) {
		in[name] = decodeAs[T](t, x)
	}
	return p, in
}

func decodeAs[T Float](t testing.TB, x tensorfile.Tensor) []T {
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return convert[T](v)
}

func TestDualMatchesPrimal(t *testing.T) {
	for _, tc := range []struct {
		tttType       string
		batch, seqLen int
	}{
		{"linear", 2, 48}, {"mlp", 2, 48}, {"linear", 1, 16},
	} {
		t.Run(fmt.Sprintf("%s/B%d/L%d", tc.tttType, tc.batch, tc.seqLen), func(t *testing.T) {
			const k = 16
			p, in := innerFixture[float64](t, tc.tttType, tc.batch, tc.seqLen, k)
			out := make([]float64, len(in["xq"]))
			p.Run(out, in["xq"], in["xk"], in["xv"], in["gate"], tc.batch, tc.seqLen)
			f, L := p.F, tc.seqLen
			var maxDiff, maxLearn float64
			for item := 0; item < tc.batch*p.Heads; item++ {
				sl := func(x []float64) []float64 { return x[item*L*f : (item+1)*L*f] }
				want := primalInner(p, item%p.Heads, sl(in["xq"]), sl(in["xk"]), sl(in["xv"]), in["gate"][item*L:(item+1)*L], L)
				// Zero gates switch learning off: how far learning moves the output.
				still := primalInner(p, item%p.Heads, sl(in["xq"]), sl(in["xk"]), sl(in["xv"]), make([]float64, L), L)
				for i, w := range want {
					maxDiff = math.Max(maxDiff, math.Abs(sl(out)[i]-w))
					maxLearn = math.Max(maxLearn, math.Abs(still[i]-w))
				}
			}
			if maxDiff > 1e-10 {
				t.Errorf("dual form differs from primal by %g", maxDiff)
			}
			if maxLearn < 1e-3 {
				t.Errorf("learning moves the output by only %g: the test cannot see update bugs", maxLearn)
			}
		})
	}
}

func BenchmarkInner125mLayer(b *testing.B) {
	s, _ := ttt.LookupSize("125m")
	const batch, seqLen, k = 1, 2048, 16
	for _, tttType := range []string{"linear", "mlp"} {
		b.Run(tttType+"/f32", func(b *testing.B) {
			w := ttt.InitParams(ttt.InnerParams(s, tttType, k), 0, false)
			p, err := NewInner[float32](w, "layers.0.ttt.", s.Heads, s.HeadDim, k, tttType == "mlp", ttt.BaseLR(tttType))
			if err != nil {
				b.Fatal(err)
			}
			in := map[string][]float32{}
			for name, x := range ttt.RandomInnerInputs(0, batch, s.Heads, seqLen, s.HeadDim) {
				in[name] = decodeAs[float32](b, x)
			}
			out := make([]float32, len(in["xq"]))
			b.ResetTimer()
			for b.Loop() {
				p.Run(out, in["xq"], in["xk"], in["xv"], in["gate"], batch, seqLen)
			}
		})
	}
}
