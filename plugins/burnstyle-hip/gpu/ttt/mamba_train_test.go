package ttt_test

import (
	"os"
	"strings"
	"testing"
	"time"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// The mamba backbone's whole training step on the emulator against the CPU
// model's float64 step: the logits, the loss and every parameter's
// gradient (the conv block's conv_norm, conv_w, conv_b, the Q/K
// convolutions' and wg among them) by relative L2 at the workload's
// tolerance. Two sequences of 32 (the convolutions' windows restart at the
// second), linear and mlp, float32 and bfloat16, graph-captured and eager.
// bfloat16 is graded against the reference at its bf16-rounded weights,
// the point it evaluates (TestEmuTrainStep reports the unrounded one's
// distance, which is the weights' rounding). One case asks for chunks: a
// training step must run the flat forward whatever the options say (its
// backward needs every layer's activations of every row, which the
// chunked forward's lanes overwrite). 125m (f = 64, C = 768) with
// XBENCH_EMU_FULL=1.
func TestEmuMambaTrainStep(t *testing.T) {
	d := openEmu(t)
	type tc struct {
		size, typ, dtype string
		B, L             int
		opt              gputtt.Options
	}
	cases := []tc{
		{"tiny", "linear", "float32", 2, 32, gputtt.Options{Chunks: 2}},
		{"tiny", "linear", "bfloat16", 2, 32, gputtt.Options{Eager: true}},
		{"tiny", "mlp", "float32", 2, 32, gputtt.Options{Eager: true}},
		{"tiny", "mlp", "bfloat16", 2, 32, gputtt.Options{}},
	}
	if os.Getenv("XBENCH_EMU_FULL") == "1" {
		cases = append(cases, tc{"125m", "linear", "float32", 1, 16, gputtt.Options{}})
	} else {
		t.Log("125m with XBENCH_EMU_FULL=1")
	}
	for _, c := range cases {
		cfg := check.Config(c.size, c.typ, c.dtype, false, c.B, c.L)
		cfg.Backward, cfg.Backbone = true, "mamba"
		s, w, in, err := check.Inputs(cfg, 9)
		if err != nil {
			t.Fatal(err)
		}
		if c.dtype == "bfloat16" {
			if w, err = check.RoundedBF16(w); err != nil {
				t.Fatal(err)
			}
		}
		ref, err := check.TrainReference(cfg, s, w, in)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		o, err := check.VerifyTrain(d, cfg, w, in, ref, c.opt)
		if err != nil {
			t.Fatalf("%s %s %s: %v", c.size, c.typ, c.dtype, err)
		}
		name, worst := o.Worst()
		t.Logf("%s %s %s B=%d L=%d (%s; %.1f s): loss %.6f (ref %.6f), logits %.3g, worst %s %.3g",
			c.size, c.typ, c.dtype, c.B, c.L, o.Describe, time.Since(t0).Seconds(), o.Loss, o.RefLoss,
			o.Logits.RelL2, name, worst)
		graded := map[string]bool{}
		for _, g := range o.Grads {
			graded[g.Name] = true
			t.Logf("  %-28s rel L2 %.3g", g.Name, g.RelL2)
		}
		for _, p := range []string{"conv_norm", "conv_w", "conv_b", "ttt.conv_q_w", "ttt.conv_q_b", "ttt.conv_k_w",
			"ttt.conv_k_b", "ttt.wg", "ttt.wq"} {
			if !graded["layers.1."+p] {
				t.Errorf("%s %s %s: no gradient of layers.1.%s graded", c.size, c.typ, c.dtype, p)
			}
		}
		if graded["layers.0.ttt.wk"] {
			t.Errorf("%s %s %s: a gradient of wk, which mamba does not have", c.size, c.typ, c.dtype)
		}
		if !strings.Contains(o.Describe, "flat forward") || strings.Contains(o.Describe, "chunks per sequence") {
			t.Errorf("%s %s %s chunks=%d: the training step ran %q, not the flat forward", c.size, c.typ, c.dtype,
				c.opt.Chunks, o.Describe)
		}
		if !o.Pass() {
			t.Errorf("%s %s %s: worst %s rel L2 %.3g (tol %g), loss %.6g vs %.6g", c.size, c.typ, c.dtype,
				name, worst, o.Tol, o.Loss, o.RefLoss)
		}
	}
}
