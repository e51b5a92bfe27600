package ttt

import (
	"slices"
	"testing"

	"github.com/xbench/xbench/harness/workload"
)

// TestOutputs: a backward verify grades the logits and one gradient per
// parameter of the configuration's own model (the backbone changes the
// list); the other phases grade their one output.
func TestOutputs(t *testing.T) {
	tiny, _ := LookupSize("tiny")
	tests := []struct {
		phase, ttt, backbone string
		first                string
		n                    int // tensors graded
		has, hasNot          string
	}{
		{workload.PhaseForward, "linear", "transformer", "logits", 1, "", "grad.embed"},
		{workload.PhaseInnerOnly, "linear", "transformer", "out", 1, "", "grad.embed"},
		{workload.PhaseBackward, "linear", "transformer", "logits", 1 + len(Params(tiny, "linear", 16, "transformer")),
			"grad.layers.1.ttt.wk", "grad.layers.0.ttt.W2"},
		{workload.PhaseBackward, "mlp", "transformer", "logits", 1 + len(Params(tiny, "mlp", 16, "transformer")),
			"grad.layers.0.ttt.W2", "grad.layers.0.conv_w"},
		{workload.PhaseBackward, "linear", "mamba", "logits", 1 + len(Params(tiny, "linear", 16, "mamba")),
			"grad.layers.0.conv_w", "grad.layers.0.ttt.wk"},
	}
	for _, tc := range tests {
		cfg := Config{ModelSize: "tiny", TTTType: tc.ttt, Backward: tc.phase == workload.PhaseBackward,
			InnerOnly: tc.phase == workload.PhaseInnerOnly, Batch: 1, SeqLen: 32, MiniBatch: 16,
			Dtype: "float32", Backbone: tc.backbone, Repeats: 1}.Result()
		got := Workload{}.Outputs(cfg)
		if len(got) != tc.n || got[0] != tc.first {
			t.Errorf("%s %s %s: %d outputs starting %q, want %d starting %q", tc.phase, tc.ttt, tc.backbone, len(got), got[0], tc.n, tc.first)
		}
		if tc.has != "" && !slices.Contains(got, tc.has) {
			t.Errorf("%s %s %s: outputs lack %q", tc.phase, tc.ttt, tc.backbone, tc.has)
		}
		if slices.Contains(got, tc.hasNot) {
			t.Errorf("%s %s %s: outputs have %q", tc.phase, tc.ttt, tc.backbone, tc.hasNot)
		}
	}
}
