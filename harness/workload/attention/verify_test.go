package attention

import (
	"math"
	"slices"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/gemm"
)

func inputs(t *testing.T, s Shape, q, k, v, dout []float32) workload.Fixtures {
	t.Helper()
	in := map[string]tensorfile.Tensor{
		"q": tensorfile.F32(s.QShape(), q), "k": tensorfile.F32(s.KShape(), k), "v": tensorfile.F32(s.KShape(), v)}
	if dout != nil {
		in["dout"] = tensorfile.F32(s.QShape(), dout)
	}
	return workload.Fixtures{Inputs: in}
}

// By hand, head_dim 1 (scale 1), two query heads on one kv head (GQA),
// k = [0, 1], v = [2, 4]:
//
//	head 0, q = [0, 0]: scores 0, 0: p = [1/2, 1/2], out 3 (causal: row 0 sees v0 only: 2, then 3)
//	head 1, q = [ln 3, ln 3]: scores 0, ln 3: p = [1/4, 3/4], out 3.5 (causal: 2, then 3.5)
func TestReferenceByHand(t *testing.T) {
	ln3 := float32(math.Log(3))
	for _, tc := range []struct {
		causal string
		want   []float64
	}{{"false", []float64{3, 3, 3.5, 3.5}}, {"true", []float64{2, 3, 2, 3.5}}} {
		cfg := resolve(t, "", map[string]string{"batch": "1", "heads": "2", "kv_heads": "1", "seq_len": "2", "head_dim": "1",
			"causal": tc.causal, "dtype": "float32"})
		s := ShapeOf(cfg)
		out, err := Workload{}.Reference(cfg, inputs(t, s, []float32{0, 0, ln3, ln3}, []float32{0, 1}, []float32{2, 4}, nil))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := out.Float64s()
		if out.DType != tensorfile.DTypeF64 || !slices.Equal(out.Shape, []int{1, 2, 2, 1}) {
			t.Fatalf("out is %s %v", out.DType, out.Shape)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-6 { // ln 3 in float32 is 3e-8 off
				t.Errorf("causal %s: out = %v, want %v", tc.causal, got, tc.want)
				break
			}
		}
	}
}

// loss is sum(out · dout) of the reference forward, for finite differences.
func loss(s Shape, q, k, v, dout []float64) float64 {
	out := compute(s, q, k, v, nil).out
	var l float64
	for i := range out {
		l += out[i] * dout[i]
	}
	return l
}

// The reference gradients are those of sum(out · dout): checked against
// central differences (error O(h^2) ≈ 1e-10) on a GQA case, causal and not.
func TestGradientsFiniteDifferences(t *testing.T) {
	for _, causal := range []string{"false", "true"} {
		cfg := resolve(t, workload.PhaseBackward, map[string]string{"batch": "2", "heads": "4", "kv_heads": "2", "seq_len": "3",
			"head_dim": "2", "causal": causal, "dtype": "float32"})
		s := ShapeOf(cfg)
		fx, err := Workload{}.Fixtures(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string][]float64{}
		for _, n := range []string{"q", "k", "v", "dout"} {
			in[n], _ = fx.Inputs[n].Float64s()
		}
		refs, err := Workload{}.References(cfg, fx)
		if err != nil {
			t.Fatal(err)
		}
		const h = 1e-5
		for name, grad := range map[string]string{"q": "dq", "k": "dk", "v": "dv"} {
			got, _ := refs[grad].Float64s()
			x := in[name]
			for i := range x {
				orig := x[i]
				x[i] = orig + h
				up := loss(s, in["q"], in["k"], in["v"], in["dout"])
				x[i] = orig - h
				down := loss(s, in["q"], in["k"], in["v"], in["dout"])
				x[i] = orig
				if fd := (up - down) / (2 * h); math.Abs(fd-got[i]) > 1e-7 {
					t.Errorf("causal %s: %s[%d] = %v, finite difference %v", causal, grad, i, got[i], fd)
				}
			}
		}
		if got, _ := refs["out"].Float64s(); !slices.Equal(got, compute(s, in["q"], in["k"], in["v"], nil).out) {
			t.Error("out of the backward reference differs from the forward's")
		}
	}
}

func TestFixtures(t *testing.T) {
	w := Workload{}
	set := map[string]string{"batch": "2", "heads": "4", "kv_heads": "2", "seq_len": "5", "kv_len": "7", "head_dim": "3", "dtype": "bfloat16"}
	fwd := resolve(t, "", set)
	fx, err := w.Fixtures(fwd, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Weights) != 0 || len(fx.Inputs) != 3 || fx.Inputs["dout"].Data != nil {
		t.Errorf("forward fixtures: %d weights, inputs %v; want q, k, v", len(fx.Weights), len(fx.Inputs))
	}
	if !slices.Equal(fx.Inputs["k"].Shape, []int{2, 2, 7, 3}) || !slices.Equal(fx.Inputs["q"].Shape, []int{2, 4, 5, 3}) {
		t.Errorf("shapes q %v k %v", fx.Inputs["q"].Shape, fx.Inputs["k"].Shape)
	}
	bwd, _ := w.Fixtures(resolve(t, workload.PhaseBackward, set), 1)
	if !slices.Equal(bwd.Inputs["dout"].Shape, []int{2, 4, 5, 3}) || !slices.Equal(bwd.Inputs["q"].Data, fx.Inputs["q"].Data) {
		t.Error("backward fixtures lack dout or draw q differently")
	}
	other, _ := w.Fixtures(fwd, 2)
	if slices.Equal(other.Inputs["v"].Data, fx.Inputs["v"].Data) {
		t.Error("seed does not change v")
	}
	for name, span := range map[string]float32{"q": 2, "k": 2, "v": 1, "dout": 1} {
		v, _ := bwd.Inputs[name].Float32s()
		for _, x := range v {
			if x < -span || x > span || gemm.RoundBF16(x) != x {
				t.Fatalf("%s value %v is outside ±%v or not a bfloat16", name, x, span)
			}
		}
	}
	if got := w.Outputs(resolve(t, workload.PhaseBoth, set)); !slices.Equal(got, []string{"out", "dq", "dk", "dv"}) {
		t.Errorf("Outputs(both) = %v", got)
	}
	if got := workload.OutputsOf(w, fwd); !slices.Equal(got, []string{"out"}) {
		t.Errorf("OutputsOf(forward) = %v", got)
	}
	bad := fx
	bad.Inputs = map[string]tensorfile.Tensor{"q": fx.Inputs["k"], "k": fx.Inputs["k"], "v": fx.Inputs["v"]}
	if _, err := w.Reference(fwd, bad); err == nil {
		t.Error("Reference accepted q of k's shape")
	}
}

func relL2(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// worst is the largest relative L2 error over the compared tensors of a
// bug (or a correct emulation) against the reference.
func worst(t *testing.T, cfg result.Config, refs map[string]tensorfile.Tensor, g grads) float64 {
	t.Helper()
	have := map[string][]float64{"out": g.out, "dq": g.dq, "dk": g.dk, "dv": g.dv}
	var w float64
	for _, name := range (Workload{}).Outputs(cfg) {
		ref, _ := refs[name].Float64s()
		w = max(w, relL2(have[name], ref))
	}
	return w
}

// A correct backend whose only error is rounding every result to the dtype
// stays under half the tolerance; the typical bugs (no scale, no causal
// mask, the wrong GQA grouping) fail it by far, in every dtype and phase.
func TestTolerancePassesCorrectAndFailsWrong(t *testing.T) {
	base := map[string]string{"batch": "2", "heads": "4", "kv_heads": "2", "seq_len": "37", "head_dim": "40", "causal": "true"}
	for _, dt := range DtypeNames() {
		for _, phase := range []string{workload.PhaseForward, workload.PhaseBackward} {
			set := map[string]string{"dtype": dt}
			for k, v := range base {
				set[k] = v
			}
			cfg := resolve(t, phase, set)
			s := ShapeOf(cfg)
			fx, _ := Workload{}.Fixtures(cfg, 1)
			refs, err := Workload{}.References(cfg, fx)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string][]float64{}
			for n, x := range fx.Inputs {
				in[n], _ = x.Float64s()
			}
			tol := Workload{}.Tolerance(cfg)
			d, _ := lookupDtype(dt)
			rounded := compute(s, in["q"], in["k"], in["v"], in["dout"])
			for _, x := range [][]float64{rounded.out, rounded.dq, rounded.dk, rounded.dv} {
				for i := range x {
					if d.round != nil {
						x[i] = float64(d.round(float32(x[i])))
					}
				}
			}
			e := worst(t, cfg, refs, rounded)
			t.Logf("%s %s: rounding gives %.2e", dt, phase, e)
			if e > tol/2 {
				t.Errorf("%s %s: rounding alone gives %.2e, over half the tolerance %.0e", dt, phase, e, tol)
			}
			unscaled := slices.Clone(in["q"])
			for i := range unscaled {
				unscaled[i] *= math.Sqrt(float64(s.HeadDim))
			}
			noMask := s
			noMask.Causal = false
			swapped := slices.Clone(in["k"]) // kv heads 0 and 1 exchanged: the wrong group per query head
			block := s.KVLen * s.HeadDim
			for b := 0; b < s.Batch; b++ {
				o := b * s.KVHeads * block
				copy(swapped[o:o+block], in["k"][o+block:o+2*block])
				copy(swapped[o+block:o+2*block], in["k"][o:o+block])
			}
			for name, g := range map[string]grads{
				"no scale":    compute(s, unscaled, in["k"], in["v"], in["dout"]),
				"no mask":     compute(noMask, in["q"], in["k"], in["v"], in["dout"]),
				"wrong group": compute(s, in["q"], swapped, in["v"], in["dout"]),
			} {
				e := worst(t, cfg, refs, g)
				t.Logf("%s %s: %s gives %.2e (tolerance %.0e)", dt, phase, name, e, tol)
				if e < 10*tol {
					t.Errorf("%s %s: bug %q gives %.2e, within 10× the tolerance %.0e", dt, phase, name, e, tol)
				}
			}
		}
	}
}

func TestTolerance(t *testing.T) {
	tests := []struct {
		phase, dtype string
		seq, kv      string
		want         float64
	}{
		{"forward", "float32", "37", "0", 1e-5},
		{"backward", "float32", "256", "0", 2e-5},
		{"both", "bfloat16", "100", "1024", 3e-2 * 2},
		{"forward", "float16", "1024", "0", 3e-3 * 2},
		{"forward", "bfloat16", "16384", "0", 2e-2 * 5},
	}
	for _, tc := range tests {
		cfg := resolve(t, tc.phase, map[string]string{"dtype": tc.dtype, "seq_len": tc.seq, "kv_len": tc.kv})
		if got := (Workload{}).Tolerance(cfg); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s %s s%s kv%s: tolerance %v, want %v", tc.phase, tc.dtype, tc.seq, tc.kv, got, tc.want)
		}
	}
	if got := (Workload{}).Tolerance(result.Config{Params: map[string]string{"dtype": "float64"}}); got != 0 {
		t.Errorf("unknown dtype: tolerance %v, want 0", got)
	}
}
