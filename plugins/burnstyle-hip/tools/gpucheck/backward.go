package main

// The training step (phase backward): verification of the logits, the loss
// and every parameter's gradient against the CPU float64 training step, the
// inner backward kernels alone against central differences, then timing of
// 125m at L = 2048 with a per-part profile. Each case runs under recover, so
// a failing or crashing backward case is one row and the rest (and the
// forward's checks) still run.

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// safely runs f, turning a panic into an error with its stack.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

type bcase struct {
	size, typ string
	B, L, K   int
	opt       gputtt.Options
	tag       string // "mamba..." runs the mamba backbone
}

// verifyBackward checks every case in float32 and bfloat16 and returns its
// rows and the number of failures. A bfloat16 verdict is taken against the
// reference at the bf16-rounded weights (the point the run evaluates); the
// plain float64 reference's error is reported beside it, since the weights'
// rounding alone moves small gradients (lr_b) by ~5%.
//
// cases, when set, picks the cases whose key "size/type/tag." contains one
// of its comma-separated words ("125m/linear/." is 125m linear untagged):
// each 125m case's float64 reference takes the CPU about a minute.
func verifyBackward(d *gpu.Device, only, cases string) ([]map[string]any, int) {
	all := []bcase{
		{"tiny", "linear", 2, 64, 16, gputtt.Options{}, ""},
		{"tiny", "mlp", 2, 64, 16, gputtt.Options{}, ""},
		{"tiny", "linear", 2, 64, 8, gputtt.Options{}, "K8"},
		{"tiny", "linear", 2, 64, 16, gputtt.Options{Eager: true, ClusterSize: 1}, "cl1-eager"},
		{"125m", "linear", 1, 128, 16, gputtt.Options{}, ""},
		{"125m", "mlp", 1, 128, 16, gputtt.Options{}, ""},
		{"125m", "linear", 2, 64, 16, gputtt.Options{ClusterSize: 2}, "cl2"},
		{"tiny", "linear", 2, 64, 16, gputtt.Options{BwdVariant: 1}, "bwd-v1"}, // the one-block inner backward
		{"125m", "linear", 1, 128, 16, gputtt.Options{BwdVariant: 1}, "bwd-v1"},
		// the mamba backbone: its conv block, shared-Q/K convolutions and output gate
		{"tiny", "linear", 2, 64, 16, gputtt.Options{}, "mamba"},
		{"tiny", "mlp", 2, 64, 16, gputtt.Options{}, "mamba"},
		{"125m", "linear", 1, 128, 16, gputtt.Options{}, "mamba"},
		{"125m", "mlp", 1, 128, 16, gputtt.Options{}, "mamba"},
		{"125m", "linear", 2, 256, 16, gputtt.Options{Eager: true}, "mamba-eager"},
	}
	var rows []map[string]any
	fails := 0
	fmt.Printf("\ntraining step against the CPU float64 step (every parameter's gradient, relative L2)\n")
	fmt.Printf("%-5s %-6s %-8s %-3s %-4s %-3s %-10s %-10s %-10s %-34s %s\n", "size", "type", "dtype", "B", "L", "K",
		"tag", "logits", "loss_err", "worst grad", "verdict")
	for _, c := range all {
		if !strings.Contains(c.size, only) || !picked(cases, c.size+"/"+c.typ+"/"+c.tag+".") {
			continue
		}
		cfg := check.Config(c.size, c.typ, "float32", false, c.B, c.L)
		cfg.MiniBatch, cfg.Backward = c.K, true
		if strings.HasPrefix(c.tag, "mamba") {
			cfg.Backbone = "mamba"
		}
		var ref, refR check.TrainRef
		var refMs float64
		errRef := safely(func() error {
			s, w, in, err := check.Inputs(cfg, 11)
			if err != nil {
				return err
			}
			t0 := time.Now()
			if ref, err = check.TrainReference(cfg, s, w, in); err != nil {
				return err
			}
			refMs = time.Since(t0).Seconds() * 1e3
			wr, err := check.RoundedBF16(w)
			if err != nil {
				return err
			}
			refR, err = check.TrainReference(cfg, s, wr, in)
			return err
		})
		for _, dt := range []string{"float32", "bfloat16"} {
			cfg.Dtype = dt
			row := map[string]any{"size": c.size, "type": c.typ, "dtype": dt, "B": c.B, "L": c.L, "K": c.K, "tag": c.tag, "ref_ms": refMs}
			var o, oR check.TrainOutcome
			err := errRef
			if err == nil {
				err = safely(func() error {
					_, w, in, err := check.Inputs(cfg, 11)
					if err != nil {
						return err
					}
					if o, err = check.VerifyTrain(d, cfg, w, in, ref, c.opt); err != nil || dt != "bfloat16" {
						oR = o
						return err
					}
					oR, err = check.VerifyTrain(d, cfg, w, in, refR, c.opt)
					return err
				})
			}
			verdict := "PASS"
			name, worst := oR.Worst()
			switch {
			case err != nil:
				verdict, fails = "ERROR "+err.Error(), fails+1
			case !oR.Pass():
				verdict, fails = fmt.Sprintf("FAIL (tol %.g)", oR.Tol), fails+1
			}
			if pn, pw := o.Worst(); err == nil && dt == "bfloat16" {
				verdict += fmt.Sprintf(" (plain f64 ref: worst %s %.3g, logits %.3g)", pn, pw, o.Logits.RelL2)
			}
			fmt.Printf("%-5s %-6s %-8s %-3d %-4d %-3d %-10s %-10.3g %-10.3g %-34s %s\n", c.size, c.typ, dt, c.B, c.L, c.K,
				c.tag, oR.Logits.RelL2, relErr(oR.Loss, oR.RefLoss), fmt.Sprintf("%s %.3g", name, worst), verdict)
			grads := map[string]float64{}
			for _, g := range oR.Grads {
				grads[g.Name] = g.RelL2
			}
			plain := map[string]float64{}
			for _, g := range o.Grads {
				plain[g.Name] = g.RelL2
			}
			row["grads_rel_l2"], row["grads_rel_l2_plain"], row["logits_rel_l2"] = grads, plain, oR.Logits.RelL2
			row["loss"], row["ref_loss"], row["verdict"], row["describe"] = oR.Loss, oR.RefLoss, verdict, oR.Describe
			rows = append(rows, row)
		}
	}
	return append(rows, verifyInnerBackward(d, only, &fails)...), fails
}

// verifyInnerBackward checks the inner backward kernels alone (inner-only
// training step, loss sum(out * dout)) against central differences of the
// CPU inner model, at tiny.
func verifyInnerBackward(d *gpu.Device, only string, fails *int) []map[string]any {
	if !strings.Contains("tiny", only) {
		return nil
	}
	var rows []map[string]any
	for _, typ := range []string{"linear", "mlp"} {
		cfg := check.Config("tiny", typ, "float32", true, 2, 64)
		cfg.Backward = true
		var outs []check.GradOutcome
		err := safely(func() error {
			s, w, in, err := check.InnerTrainInputs(cfg, 3)
			if err != nil {
				return err
			}
			ref, err := check.InnerGradFD(cfg, s, w, in, 64)
			if err != nil {
				return err
			}
			got, _, err := check.RunTrain(d, cfg, w, in, gputtt.Options{})
			if err != nil {
				return err
			}
			outs, err = check.CompareGrads(got, ref)
			return err
		})
		verdict, worst, name := "PASS", 0.0, ""
		for _, o := range outs {
			if o.RelL2 > worst || o.NaN > 0 {
				worst, name = o.RelL2, o.Name
			}
			if o.NaN > 0 || !(o.RelL2 <= 1e-4) {
				verdict = "FAIL (tol 1e-4)"
			}
		}
		if err != nil {
			verdict = "ERROR " + err.Error()
		}
		if verdict != "PASS" {
			*fails++
		}
		fmt.Printf("inner backward alone, tiny %s float32 vs central differences: worst %s %.3g %s\n", typ, name, worst, verdict)
		rows = append(rows, map[string]any{"size": "tiny", "type": typ, "phase": "inner_backward", "worst": name,
			"rel_l2": worst, "verdict": verdict})
	}
	return rows
}

// picked says whether key contains one of the comma-separated words of
// list; an empty list picks everything.
func picked(list, key string) bool {
	if list == "" {
		return true
	}
	for _, w := range strings.Split(list, ",") {
		if w != "" && strings.Contains(key, w) {
			return true
		}
	}
	return false
}

func relErr(a, b float64) float64 {
	if b == 0 {
		return a
	}
	d := (a - b) / b
	if d < 0 {
		return -d
	}
	return d
}

// timeBackward times the training step at size and L (B = 1, default
// weights, as the harness times) and the inner-only training step, with a
// per-part profile of each: forward parts under their forward names,
// backward parts ending in _bwd (plus softmax_xent and zero_grads).
func timeBackward(d *gpu.Device, size string, L, repeats int, types string) []map[string]any {
	cases := []struct {
		typ, dtype string
		inner      bool
		opt        gputtt.Options
		tag        string
	}{
		{"linear", "float32", false, gputtt.Options{}, ""}, {"linear", "bfloat16", false, gputtt.Options{}, ""},
		{"mlp", "float32", false, gputtt.Options{}, ""}, {"mlp", "bfloat16", false, gputtt.Options{}, ""},
		{"linear", "float32", true, gputtt.Options{}, ""}, {"linear", "bfloat16", true, gputtt.Options{}, ""},
		{"mlp", "float32", true, gputtt.Options{}, ""},
		// the linear inner backward: the one-block kernel (variant 1) beside the
		// cluster kernel (the default), in the step and alone; its block size
		{"linear", "float32", false, gputtt.Options{BwdVariant: 1}, "bwd-v1"},
		{"linear", "float32", true, gputtt.Options{BwdVariant: 1}, "bwd-v1"},
		{"linear", "float32", true, gputtt.Options{ClusterSize: 8}, "cl8"}, // forward and backward on 8 or 2 CTAs
		{"linear", "float32", true, gputtt.Options{ClusterSize: 2}, "cl2"},
		{"linear", "float32", true, gputtt.Options{BwdThreads: 512}, "bwd512"},
		{"linear", "float32", true, gputtt.Options{BwdThreads: 128}, "bwd128"},
	}
	var rows []map[string]any
	fmt.Printf("\ntraining step (forward + backward) %s B=1 L=%d K=16, %d timed calls after 3 warmup (device events)\n", size, L, repeats)
	fmt.Printf("%-6s %-8s %-12s %-7s %-9s %-9s %-9s %-10s %s\n", "type", "dtype", "phase", "tag", "median", "min", "first", "compile", "peak_MiB")
	for _, c := range cases {
		if !strings.Contains(types, c.typ) {
			continue
		}
		cfg := check.Config(size, c.typ, c.dtype, c.inner, 1, L)
		cfg.Backward = true
		phase := "train"
		if c.inner {
			phase = "inner_train"
		}
		row := map[string]any{"type": c.typ, "dtype": c.dtype, "phase": phase, "tag": c.tag}
		err := safely(func() error {
			var t check.Timing
			var err error
			if c.inner {
				t, err = timeInnerTrain(d, cfg, repeats, c.opt)
			} else {
				t, err = check.Time(d, cfg, 3, repeats, c.opt)
			}
			if err != nil {
				return err
			}
			fmt.Printf("%-6s %-8s %-12s %-7s %-9.3f %-9.3f %-9.2f %-10.1f %.0f\n", c.typ, c.dtype, phase, c.tag, t.Median, t.Min, t.First,
				t.CompileMs, float64(t.PeakBytes)/(1<<20))
			row["median_ms"], row["min_ms"], row["first_ms"], row["compile_ms"] = t.Median, t.Min, t.First, t.CompileMs
			row["samples_ms"], row["peak_bytes"], row["describe"] = t.Samples, t.PeakBytes, t.Describe
			parts, err := trainProfile(d, cfg, c.opt)
			if err != nil {
				fmt.Println("   profile:", err)
				return nil
			}
			fwd, bwd := 0.0, 0.0
			for k, v := range parts {
				if strings.HasSuffix(k, "_bwd") || k == "softmax_xent" || k == "zero_grads" {
					bwd += v
				} else {
					fwd += v
				}
			}
			fmt.Printf("   forward %.3f ms, backward %.3f ms; parts: %s\n", fwd, bwd, formatParts(parts))
			row["profile_ms"], row["profile_forward_ms"], row["profile_backward_ms"] = parts, fwd, bwd
			return nil
		})
		if err != nil {
			fmt.Printf("%-6s %-8s %-12s %-7s ERROR %v\n", c.typ, c.dtype, phase, c.tag, err)
			row["error"] = err.Error()
		}
		rows = append(rows, row)
	}
	return rows
}

// timeInnerTrain times the inner-only training step (the inner forward with
// its trace, then the inner backward) as check.Time times a forward.
func timeInnerTrain(d *gpu.Device, cfg ttt.Config, repeats int, opt gputtt.Options) (check.Timing, error) {
	m, err := loaded(d, cfg, opt)
	if err != nil {
		return check.Timing{}, err
	}
	defer m.Close()
	t := check.Timing{CompileMs: m.CompileMs(), PeakBytes: m.PeakBytes(), Describe: m.Describe()}
	if t.First, err = m.Run(); err != nil {
		return t, err
	}
	for i := 0; i < 3+repeats; i++ {
		ms, err := m.Run()
		if err != nil {
			return t, err
		}
		if i >= 3 {
			t.Samples = append(t.Samples, ms)
		}
	}
	t.Median, t.Min = medianMin(t.Samples)
	return t, nil
}

func medianMin(v []float64) (float64, float64) {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s) == 0 {
		return 0, 0
	}
	return s[len(s)/2], s[0]
}

func trainProfile(d *gpu.Device, cfg ttt.Config, opt gputtt.Options) (map[string]float64, error) {
	m, err := loaded(d, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	for i := 0; i < 3; i++ {
		if _, err := m.Run(); err != nil {
			return nil, err
		}
	}
	return m.Profile()
}
