package ttt_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// The inner-loop backward kernels alone, through the inner-only training
// step (loss sum(out * dout)), against float64 central differences of the
// CPU inner model: every inner parameter and the inputs xq, xk, xv, gate,
// each graded by relative L2. bfloat16 runs the same kernels on bf16
// inputs and parameters, so its bound is the workload's bf16 tolerance.
func TestEmuInnerBackward(t *testing.T) {
	only := os.Getenv("XBENCH_EMU_ONLY") // e.g. mlp: run the cases whose type contains it
	d := openEmu(t)
	cases := []struct {
		size, typ, dtype string
		L, K             int
		opt              gputtt.Options
	}{
		{"tiny", "linear", "float32", 32, 16, gputtt.Options{}},
		{"tiny", "linear", "float32", 32, 8, gputtt.Options{}},
		{"tiny", "linear", "bfloat16", 32, 16, gputtt.Options{}},
		{"tiny", "linear", "float32", 32, 16, gputtt.Options{ClusterSize: 1}},
		{"125m", "linear", "float32", 32, 16, gputtt.Options{}},
		{"125m", "linear", "float32", 32, 16, gputtt.Options{BwdThreads: 512}}, // gpucheck times 512 and 128 too
		{"tiny", "linear", "float32", 32, 16, gputtt.Options{BwdThreads: 128}},
		{"tiny", "linear", "float32", 32, 16, gputtt.Options{BwdVariant: 1}},  // the one-block kernel at its default size
		{"125m", "linear", "float32", 32, 16, gputtt.Options{ClusterSize: 2}}, // the cluster backward at 32 columns a CTA
		{"tiny", "mlp", "float32", 32, 16, gputtt.Options{}},
		{"tiny", "mlp", "float32", 32, 8, gputtt.Options{}},
		{"tiny", "mlp", "bfloat16", 32, 16, gputtt.Options{}},
	}
	if os.Getenv("XBENCH_EMU_FULL") == "1" { // a minute of differences and emulation
		cases = append(cases, struct {
			size, typ, dtype string
			L, K             int
			opt              gputtt.Options
		}{"125m", "mlp", "float32", 32, 16, gputtt.Options{}})
	} else {
		t.Log("125m mlp with XBENCH_EMU_FULL=1")
	}
	refs := map[string]map[string][]float64{} // dtypes and options share the float32 inputs' reference
	for _, c := range cases {
		if !strings.Contains(c.typ, only) {
			continue
		}
		cfg := check.Config(c.size, c.typ, c.dtype, true, 2, c.L)
		cfg.MiniBatch, cfg.Backward = c.K, true
		sample := 0 // every position of tiny linear; a sample of mlp and f = 64
		if c.typ == "mlp" {
			sample = 64
		}
		s, err := check.SizeOf(cfg, c.opt)
		if c.size != "tiny" { // f = 64's kernels with two heads, not twelve
			cfg.Batch, sample = 1, 48
			c.opt.Shape = check.SmallInner(c.size)
			s = *c.opt.Shape
		}
		if err != nil {
			t.Fatal(err)
		}
		w, in := check.InnerTrainInputsOf(cfg, s, 5)
		t0 := time.Now()
		key := fmt.Sprint(c.size, c.typ, c.L, c.K)
		ref, ok := refs[key]
		if !ok {
			if ref, err = check.InnerGradFD(cfg, s, w, in, sample); err != nil {
				t.Fatal(err)
			}
			refs[key] = ref
		}
		fdTime := time.Since(t0)
		t0 = time.Now()
		got, desc, err := check.RunTrain(d, cfg, w, in, c.opt)
		gpuTime := time.Since(t0)
		if err != nil {
			t.Fatalf("%s %s %s K=%d: %v", c.size, c.typ, c.dtype, c.K, err)
		}
		outs, err := check.CompareGrads(got, ref)
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-4
		if c.dtype == "bfloat16" {
			tol = 5e-2
		}
		t.Logf("%s %s %s K=%d cs=%d (%s; differences %.1f s, emulator %.1f s)", c.size, c.typ, c.dtype, c.K,
			c.opt.ClusterSize, desc, fdTime.Seconds(), gpuTime.Seconds())
		for _, o := range outs {
			t.Logf("  %-26s rel L2 %.3g  max abs %.3g", o.Name, o.RelL2, o.MaxAbs)
			if o.NaN > 0 || !(o.RelL2 <= tol) {
				t.Errorf("%s %s %s K=%d: %s rel L2 %.3g (tol %g), %d NaN", c.size, c.typ, c.dtype, c.K, o.Name, o.RelL2, tol, o.NaN)
			}
		}
	}
}

// The whole training step (forward keeping its activations, loss, dense
// backward through cuBLAS and our row kernels, the inner backward, the
// embedding's scatter-add) against the CPU model's float64 training step:
// the logits, the loss and every parameter's gradient by relative L2, each
// reported. Two sequences, so the shared parameters' sums over the batch
// are exercised; the cluster kernel's trace at 4 CTAs (tiny's default) and
// 1; K 16 and 8; a graph-captured and an eager step; the forward chunked
// (wavefront.go: 2 chunks a sequence, 4 at K 8, so a middle chunk that
// both loads and saves the inner state, its trace in the whole sequence's
// slots; the flat one is TestEmuEngineTrain's profile). bfloat16 is graded
// at the workload's tolerance against the reference at its bf16-rounded
// weights (the point it evaluates), and reported against the plain one,
// from which the weights' rounding alone moves small gradients by ~5%.
func TestEmuTrainStep(t *testing.T) {
	d := openEmu(t)
	cases := []struct {
		size, typ, dtype string
		B, L, K          int
		opt              gputtt.Options
	}{
		{"tiny", "linear", "float32", 2, 32, 16, gputtt.Options{}},
		{"tiny", "linear", "bfloat16", 2, 32, 16, gputtt.Options{}},
		{"tiny", "linear", "float32", 2, 32, 8, gputtt.Options{Eager: true, ClusterSize: 1}},
		{"tiny", "mlp", "float32", 2, 32, 16, gputtt.Options{}},
		{"tiny", "mlp", "bfloat16", 2, 32, 16, gputtt.Options{Eager: true}},
	}
	if os.Getenv("XBENCH_EMU_FULL") == "1" {
		cases = append(cases, struct {
			size, typ, dtype string
			B, L, K          int
			opt              gputtt.Options
		}{"125m", "linear", "float32", 1, 16, 16, gputtt.Options{}})
	} else {
		t.Log("125m with XBENCH_EMU_FULL=1")
	}
	refs := map[string]check.TrainRef{}
	for _, c := range cases {
		cfg := check.Config(c.size, c.typ, c.dtype, false, c.B, c.L)
		cfg.MiniBatch, cfg.Backward = c.K, true
		s, w, in, err := check.Inputs(cfg, 9)
		if err != nil {
			t.Fatal(err)
		}
		reference := func(w map[string]tensorfile.Tensor, rounded bool) check.TrainRef {
			key := fmt.Sprint(c.size, c.typ, c.B, c.L, c.K, rounded)
			ref, ok := refs[key]
			if !ok {
				if ref, err = check.TrainReference(cfg, s, w, in); err != nil {
					t.Fatal(err)
				}
				refs[key] = ref
			}
			return ref
		}
		ref := reference(w, false)
		t0 := time.Now()
		o, err := check.VerifyTrain(d, cfg, w, in, ref, c.opt)
		if err != nil {
			t.Fatalf("%s %s %s K=%d: %v", c.size, c.typ, c.dtype, c.K, err)
		}
		name, worst := o.Worst()
		t.Logf("%s %s %s B=%d L=%d K=%d (%s; %.1f s): loss %.6f (ref %.6f), logits %.3g, worst %s %.3g",
			c.size, c.typ, c.dtype, c.B, c.L, c.K, o.Describe, time.Since(t0).Seconds(), o.Loss, o.RefLoss,
			o.Logits.RelL2, name, worst)
		var atRounded []check.GradOutcome
		plain := o.Grads
		if c.dtype == "bfloat16" {
			wr, err := check.RoundedBF16(w)
			if err != nil {
				t.Fatal(err)
			}
			o.Tol = 0.1 // against the unrounded weights: loose, reported
			if !o.Pass() {
				t.Errorf("%s %s bfloat16: %s rel L2 %.3g against the float64 reference", c.size, c.typ, name, worst)
			}
			if o, err = check.VerifyTrain(d, cfg, w, in, reference(wr, true), c.opt); err != nil {
				t.Fatal(err)
			}
			atRounded = o.Grads
			name, worst = o.Worst()
			t.Logf("  at bf16-rounded weights: loss %.6f (ref %.6f), logits %.3g, worst %s %.3g", o.Loss, o.RefLoss,
				o.Logits.RelL2, name, worst)
		}
		for i, g := range plain {
			if atRounded != nil {
				t.Logf("  %-28s rel L2 %.3g (at the rounded weights %.3g)", g.Name, g.RelL2, atRounded[i].RelL2)
				continue
			}
			t.Logf("  %-28s rel L2 %.3g", g.Name, g.RelL2)
		}
		if !o.Pass() {
			t.Errorf("%s %s %s K=%d: worst %s rel L2 %.3g (tol %g), loss %.6g vs %.6g", c.size, c.typ, c.dtype, c.K,
				name, worst, o.Tol, o.Loss, o.RefLoss)
		}
	}
}

// The engine adapter the Native backend plugs in, for the training step:
// what it declines, then prepare, device-timed steps and Outputs (the
// backend's export): the logits and grad.<param> of every parameter of the
// configuration in the spec's shapes, against the CPU float64 step.
func TestEmuEngineTrain(t *testing.T) {
	e := gputtt.EngineOn(openEmu(t)) // not the shared device: another test may have taken the emulator's context
	cfg := check.Config("tiny", "linear", "float32", false, 1, 32)
	cfg.Backward = true
	s, w, in, err := check.Inputs(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		what string
		edit func(*ttt.Config)
	}{
		{"seq_len 1", func(c *ttt.Config) { c.SeqLen, c.MiniBatch = 1, 1 }},
	} {
		c := cfg
		bad.edit(&c)
		if st, msg := e.Check(c, s); st != "unsupported" || msg == "" {
			t.Errorf("backward %s: status %q %q, want unsupported with a reason", bad.what, st, msg)
		}
	}
	if st, msg := e.Check(cfg, s); st != "ok" {
		t.Fatalf("check: %s %s", st, msg)
	}
	mamba := cfg // its training step runs on the GPU too (TestEmuMambaTrainStep)
	mamba.Backbone = "mamba"
	if st, msg := e.Check(mamba, s); st != "ok" {
		t.Errorf("check backward mamba: %s %s", st, msg)
	}
	j, err := e.Prepare(cfg, s, w, in)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := 0; i < 2; i++ {
		if ms, err := j.StepMs(); err != nil || ms <= 0 {
			t.Fatalf("step %d: %v ms, %v", i, ms, err)
		}
	}
	// A profile runs the step on one stream with an event between parts
	// (the dW products inline); the gradients it leaves are checked below.
	parts, err := j.Phases()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"inner", "inner_bwd", "softmax_xent", "gemm_head_bwd", "gemm_qkvg_bwd", "norm_bwd", "embed_bwd"} {
		if parts[p] <= 0 {
			t.Errorf("profile has no %q part: %v", p, parts)
		}
	}
	outs, err := j.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := check.TrainReference(cfg, s, w, in)
	if err != nil {
		t.Fatal(err)
	}
	params := ttt.Params(s, cfg.TTTType, cfg.MiniBatch, cfg.Backbone)
	if len(outs) != 1+len(params) {
		t.Errorf("%d outputs, want the logits and %d gradients", len(outs), len(params))
	}
	want := map[string][]float64{"logits": ref.Logits}
	for _, p := range params {
		g, ok := outs[ttt.GradPrefix+p.Name]
		if !ok || !slices.Equal(g.Shape, p.Shape) {
			t.Fatalf("%s: missing or shaped %v, want %v", ttt.GradPrefix+p.Name, g.Shape, p.Shape)
		}
		want[ttt.GradPrefix+p.Name] = ref.Grads[p.Name]
	}
	res, err := check.CompareGrads(outs, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.NaN > 0 || !(r.RelL2 <= 1e-4) {
			t.Errorf("%s: rel L2 %.3g, %d NaN", r.Name, r.RelL2, r.NaN)
		}
	}
	if j.MemoryBytes() <= 0 || !strings.Contains(j.Timing(), "training step") {
		t.Errorf("memory %d, timing %q", j.MemoryBytes(), j.Timing())
	}
}
