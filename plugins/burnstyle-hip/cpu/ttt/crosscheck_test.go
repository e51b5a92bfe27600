package ttt

import (
	"math"
	"testing"

	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/harness/workload/ttt/reference"
)

// These tests hold this package's model against the harness's reference
// in float64 on the tiny model, as `xbench verify` does. The reference is
// imported by this test file only: the plugin binary does not link it
// (TestPluginDoesNotLinkAReference in package burnstylehip).

func relL2(a, b []float64) float64 {
	var d, n float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += b[i] * b[i]
	}
	return math.Sqrt(d / n)
}

func tinySize(t *testing.T) ttt.Size {
	s, err := ttt.LookupSize("tiny")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestModelMatchesReference(t *testing.T) {
	s := tinySize(t)
	const batch, seqLen, k = 2, 32, 16
	for _, tc := range []struct{ tttType, backbone string }{
		{"linear", "transformer"}, {"mlp", "transformer"}, {"linear", "mamba"}, {"mlp", "mamba"},
	} {
		t.Run(tc.tttType+"/"+tc.backbone, func(t *testing.T) {
			w := ttt.PerturbedWeights(s, tc.tttType, k, tc.backbone, 3)
			ids, _ := ttt.RandomTokens(4, batch, seqLen, s.Vocab).Int32s()
			mine, err := NewModel[float64](s, tc.tttType, tc.backbone, k, w)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := reference.NewModel[float64](s, tc.tttType, tc.backbone, k, w)
			if err != nil {
				t.Fatal(err)
			}
			logits, grads, err := mine.TrainStep(ids, batch, seqLen)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := ref.ForwardBackward(ids, batch, seqLen)
			if err != nil {
				t.Fatal(err)
			}
			if e := relL2(logits, want); e > 1e-12 {
				t.Errorf("logits: relative L2 %g from the reference", e)
			}
			fwd, err := mine.Forward(ids, batch, seqLen)
			if err != nil {
				t.Fatal(err)
			}
			if e := relL2(fwd, want); e > 1e-12 {
				t.Errorf("forward logits: relative L2 %g from the reference", e)
			}
			refGrads := ref.Grads()
			for _, p := range ttt.Params(s, tc.tttType, k, tc.backbone) {
				if e := relL2(grads[p.Name], refGrads[p.Name]); !(e < 1e-12) {
					t.Errorf("grad %s: relative L2 %g from the reference", p.Name, e)
				}
			}
		})
	}
}

func TestInnerOnlyMatchesReference(t *testing.T) {
	s := tinySize(t)
	const batch, seqLen, k = 2, 48, 16
	for _, tttType := range []string{"linear", "mlp"} {
		t.Run(tttType, func(t *testing.T) {
			w := ttt.InitParams(ttt.InnerParams(s, tttType, k), 5, true)
			in := ttt.RandomInnerInputs(6, batch, s.Heads, seqLen, s.HeadDim)
			get := func(name string) []float64 { v, _ := in[name].Float64s(); return v }
			mine, err := NewInner[float64](s, tttType, k, w)
			if err != nil {
				t.Fatal(err)
			}
			got, err := mine.InnerOnly(get("xq"), get("xk"), get("xv"), get("gate"), batch, seqLen)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := reference.NewInner[float64](w, "layers.0.ttt.", s.Heads, s.HeadDim, k, tttType == "mlp", ttt.BaseLR(tttType))
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, len(got))
			ref.Run(want, get("xq"), get("xk"), get("xv"), get("gate"), batch, seqLen)
			if e := relL2(got, want); e > 1e-12 {
				t.Errorf("out: relative L2 %g from the reference", e)
			}
		})
	}
}
