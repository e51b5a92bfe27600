package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// checkNames says whether byName holds exactly the spec's parameters.
func checkNames[T Float](byName map[string][]T, s ttt.Size, tttType string, k int, backbone string) error {
	ps := ttt.Params(s, tttType, k, backbone)
	if len(ps) != len(byName) {
		return fmt.Errorf("gradients: %d tensors for %d parameters", len(byName), len(ps))
	}
	for _, p := range ps {
		if v, ok := byName[p.Name]; !ok || len(v) != p.Elements() {
			return fmt.Errorf("gradients: %q has %d elements, want %d", p.Name, len(v), p.Elements())
		}
	}
	return nil
}

// nudgedAlong returns w with tensor name moved by delta*u.
func nudgedAlong(w map[string]tensorfile.Tensor, name string, u []float64, delta float64) map[string]tensorfile.Tensor {
	out := make(map[string]tensorfile.Tensor, len(w))
	for k, v := range w {
		out[k] = v
	}
	v, _ := w[name].Float64s()
	numeric.Axpy(v, delta, u)
	out[name] = tensorfile.F64(w[name].Shape, v)
	return out
}

// fdStep is the finite-difference step for parameter p: 1e-5 for
// matrices and biases; 1e-4 for the norm weights, which sit near 1 and
// some of which move the loss so little that a smaller step leaves the
// difference in the loss's rounding; 1e-6 for tok_delta, which moves a
// learning rate that may sit near 0, where the loss curves fast.
func fdStep(p ttt.Param) float64 {
	switch {
	case strings.HasSuffix(p.Name, "tok_delta"):
		return 1e-6
	case p.Init == ttt.InitOnes:
		return 1e-4
	default:
		return 1e-5
	}
}

// TestForwardBackwardFiniteDifferences checks every parameter's gradient
// against central differences of the float64 loss, on perturbed weights
// (so no term hides at its initial value) and several mini-batches: every
// element of the small tensors (tok_delta, lr_b), a few random elements of
// the others, and for each tensor the derivative along one random
// direction, which involves all its elements at once.
func TestForwardBackwardFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		tttType, backbone string
		batch, seqLen, k  int
	}{
		{"linear", "transformer", 1, 32, 16},
		{"linear", "transformer", 2, 16, 8},
		{"mlp", "transformer", 2, 16, 8},
		{"mlp", "transformer", 1, 32, 16},
		{"linear", "mamba", 2, 16, 8},
		{"mlp", "mamba", 1, 16, 8},
	} {
		t.Run(fmt.Sprintf("%s/%s/B%d/L%d/K%d", tc.tttType, tc.backbone, tc.batch, tc.seqLen, tc.k), func(t *testing.T) {
			s, _ := ttt.LookupSize("tiny")
			w := asF64(t, ttt.PerturbedWeights(s, tc.tttType, tc.k, tc.backbone, 11))
			tokens := tokensOf(t, tc.batch, tc.seqLen)
			lossOf := func(w map[string]tensorfile.Tensor) float64 {
				m, err := NewModel[float64](s, tc.tttType, tc.backbone, tc.k, w)
				if err != nil {
					t.Fatal(err)
				}
				logits, err := m.Forward(tokens, tc.batch, tc.seqLen)
				if err != nil {
					t.Fatal(err)
				}
				return CrossEntropy(logits, tokens, tc.batch, tc.seqLen, s.Vocab)
			}
			m, err := NewModel[float64](s, tc.tttType, tc.backbone, tc.k, w)
			if err != nil {
				t.Fatal(err)
			}
			_, loss, err := m.ForwardBackward(tokens, tc.batch, tc.seqLen)
			if err != nil {
				t.Fatal(err)
			}
			if want := lossOf(w); math.Abs(loss-want) > 1e-12*want {
				t.Errorf("ForwardBackward's loss %.15g, Forward's %.15g", loss, want)
			}
			grads := m.Grads()
			if err := checkNames(grads, s, tc.tttType, tc.k, tc.backbone); err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			const tol = 1e-6
			for _, p := range ttt.Params(s, tc.tttType, tc.k, tc.backbone) {
				g := grads[p.Name]
				scale := maxAbs(g)
				if scale == 0 {
					t.Errorf("%s: the gradient is all zero", p.Name)
					continue
				}
				step := fdStep(p)
				for _, i := range probe(r, len(g), 16, 3) {
					fd := (lossOf(nudged(w, p.Name, i, step)) - lossOf(nudged(w, p.Name, i, -step))) / (2 * step)
					if e := math.Abs(fd-g[i]) / math.Max(scale, math.Abs(fd)); e > tol || math.IsNaN(g[i]) {
						t.Errorf("d%s[%d]: analytic %.12g, finite difference %.12g (error %.3g of the tensor's largest %.3g)", p.Name, i, g[i], fd, e, scale)
					}
				}
				u := make([]float64, len(g)) // a unit vector: the step is the distance moved
				for i := range u {
					u[i] = r.NormFloat64()
				}
				norm := math.Sqrt(numeric.Dot(u, u))
				for i := range u {
					u[i] /= norm
				}
				fd := (lossOf(nudgedAlong(w, p.Name, u, step)) - lossOf(nudgedAlong(w, p.Name, u, -step))) / (2 * step)
				norm = math.Sqrt(numeric.Dot(g, g))
				if want := numeric.Dot(g, u); math.Abs(fd-want) > tol*math.Max(norm, math.Abs(fd)) {
					t.Errorf("d%s along a random direction: analytic %.12g, finite difference %.12g (error %.3g of the gradient's norm %.3g)",
						p.Name, want, fd, math.Abs(fd-want)/norm, norm)
				}
			}
		})
	}
}

// TestForwardBackwardFloat32MatchesFloat64 holds the float32 training step
// to verify's float32 tolerance (1e-4 relative L2) against the float64 one,
// tensor by tensor, at verify's tiny shape.
func TestForwardBackwardFloat32MatchesFloat64(t *testing.T) {
	for _, tc := range []struct{ tttType, backbone string }{
		{"linear", "transformer"}, {"mlp", "transformer"}, {"linear", "mamba"}, {"mlp", "mamba"},
	} {
		t.Run(tc.tttType+"/"+tc.backbone, func(t *testing.T) {
			m64, _ := tinyModelOf[float64](t, tc.tttType, tc.backbone, 16)
			m32, _ := tinyModelOf[float32](t, tc.tttType, tc.backbone, 16)
			tokens := tokensOf(t, 1, 64)
			if _, _, err := m64.ForwardBackward(tokens, 1, 64); err != nil {
				t.Fatal(err)
			}
			if _, _, err := m32.ForwardBackward(tokens, 1, 64); err != nil {
				t.Fatal(err)
			}
			g64, g32 := m64.Grads(), m32.Grads()
			var worst float64
			var worstName string
			for name, want := range g64 {
				if e := relL2(g32[name], want); e > worst || math.IsNaN(e) {
					worst, worstName = e, name
				}
			}
			if worst > 1e-4 || math.IsNaN(worst) {
				t.Errorf("float32 gradient of %s differs from float64 by %.3g (relative L2)", worstName, worst)
			}
			t.Logf("worst: %s at %.3g", worstName, worst)
		})
	}
}

// TestForwardBackwardDeterministic: the gradients do not depend on how
// many goroutines computed them.
func TestForwardBackwardDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	m, _ := tinyModel[float32](t, "mlp", 8)
	tokens := tokensOf(t, 3, 16)
	var first map[string][]float32
	for _, procs := range []int{1, 3, 2} {
		runtime.GOMAXPROCS(procs)
		if _, _, err := m.ForwardBackward(tokens, 3, 16); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = map[string][]float32{}
			for name, g := range m.Grads() {
				first[name] = append([]float32(nil), g...)
			}
			continue
		}
		for name, g := range m.Grads() {
			for i, v := range g {
				if math.Float32bits(v) != math.Float32bits(first[name][i]) {
					t.Fatalf("GOMAXPROCS %d: d%s[%d] = %g, with 1 goroutine %g", procs, name, i, v, first[name][i])
				}
			}
		}
	}
}

func TestForwardBackwardErrors(t *testing.T) {
	m, _ := tinyModel[float64](t, "linear", 1)
	for _, tc := range []struct {
		name   string
		tokens []int32
		b, l   int
		want   string
	}{
		{"count", make([]int32, 5), 1, 4, "5 tokens"},
		{"one position", make([]int32, 2), 2, 1, "no next-token label"},
		{"token out of range", []int32{3, 256}, 1, 2, "outside [0, 256)"},
	} {
		if _, _, err := m.ForwardBackward(tc.tokens, tc.b, tc.l); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if m.Grads() != nil {
		t.Error("Grads before any training step: not nil")
	}
}

func BenchmarkForwardBackwardTiny(b *testing.B) {
	for _, tttType := range []string{"linear", "mlp"} {
		b.Run(tttType+"/f32/B1/L256", func(b *testing.B) {
			m, _ := tinyModel[float32](b, tttType, 16)
			tokens := tokensOf(b, 1, 256)
			for b.Loop() {
				if _, _, err := m.ForwardBackward(tokens, 1, 256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// relL2 is ||got - want|| / ||want|| with got in float32.
func relL2(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		d := float64(got[i]) - w
		num += d * d
		den += w * w
	}
	return math.Sqrt(num / den)
}
