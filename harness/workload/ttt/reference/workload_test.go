package reference

import (
	"math"
	"slices"
	"testing"

	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// References gives every tensor verify compares (workload.OutputsOf), in
// its shape and finite, for each phase and inner model, and agrees with the
// model it wraps.
func TestReferencesCoverOutputs(t *testing.T) {
	w := Workload{}
	for _, tc := range []struct{ phase, tttType string }{
		{workload.PhaseForward, "linear"}, {workload.PhaseForward, "mlp"},
		{workload.PhaseBackward, "linear"}, {workload.PhaseInnerOnly, "mlp"},
	} {
		t.Run(tc.phase+"/"+tc.tttType, func(t *testing.T) {
			cfg, err := workload.Resolve(w, tc.phase, map[string]string{
				ttt.KeyModelSize: "tiny", ttt.KeySeqLen: "32", ttt.KeyTTTType: tc.tttType}, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			fx, err := w.Fixtures(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			refs, err := w.References(cfg, fx)
			if err != nil {
				t.Fatal(err)
			}
			names := workload.OutputsOf(w, cfg)
			if len(refs) != len(names) {
				t.Errorf("%d references for %d outputs", len(refs), len(names))
			}
			for _, n := range names {
				r, ok := refs[n]
				if !ok {
					t.Fatalf("no reference %q", n)
				}
				v, err := r.Float64s()
				if err != nil || len(v) == 0 || r.DType != "F64" {
					t.Fatalf("%s: %d values of %s (%v)", n, len(v), r.DType, err)
				}
				for _, x := range v {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("%s holds %v", n, x)
					}
				}
			}
			one, err := w.Reference(cfg, fx)
			if err != nil || !slices.Equal(one.Data, refs[w.Output(cfg)].Data) {
				t.Errorf("Reference differs from References[%q] (%v)", w.Output(cfg), err)
			}
		})
	}
}
