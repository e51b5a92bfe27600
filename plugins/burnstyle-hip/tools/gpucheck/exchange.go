package main

import (
	"fmt"
	"strconv"
	"strings"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// exchangeVariant is one cluster kernel build: CTAs per head and the
// cross-CTA exchange (gpu/ttt/kernels/inner_cluster.cuh).
type exchangeVariant struct{ cs, x int }

func (v exchangeVariant) tag() string { return fmt.Sprintf("cl%d-x%d", v.cs, v.x) }
func (v exchangeVariant) opt() gputtt.Options {
	return gputtt.Options{InnerVariant: 3, ClusterSize: v.cs, Exchange: v.x}
}

// parseExchanges reads -exchanges: comma-separated X or CSxX (cluster size
// 4 when left out), e.g. "1,2,3,8x3".
func parseExchanges(list string) ([]exchangeVariant, error) {
	var out []exchangeVariant
	for _, f := range strings.Split(list, ",") {
		v := exchangeVariant{cs: 4}
		cs, x, ok := strings.Cut(strings.TrimSpace(f), "x")
		if !ok {
			cs, x = "4", cs
		}
		var err1, err2 error
		v.cs, err1 = strconv.Atoi(cs)
		v.x, err2 = strconv.Atoi(x)
		if err1 != nil || err2 != nil || v.x < 1 || v.x > 3 || v.cs < 1 || v.cs > 8 {
			return nil, fmt.Errorf("-exchanges %q: entry %q is not X or CSxX with X in 1..3 and CS in 1..8", list, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// checkExchanges verifies every variant against the float64 model first
// (inner-only at the timed length, float32, and bfloat16 for the first
// variant of each exchange; the float32 forward at a short length), then
// times inner-only float32 side by side, in rounds, so every variant sees
// the same GPU state; and the float32 forward once per variant.
func checkExchanges(d *gpu.Device, vs []exchangeVariant, size string, L, repeats, rounds int, train bool) (map[string]any, int) {
	fails := 0
	var vrows []map[string]any
	fmt.Printf("\nexchange verification against float64 (size %s)\n%-9s %-8s %-9s %-5s %-10s %-10s %s\n", size, "tag", "dtype", "phase", "L", "rel_l2", "max_abs", "verdict")
	type vc struct {
		inner bool
		B, L  int
	}
	seenX := map[int]bool{}
	for _, c := range []vc{{true, 1, L}, {false, 1, 128}} {
		cfg := check.Config(size, "linear", "float32", c.inner, c.B, c.L)
		s, w, in, err := check.Inputs(cfg, 11)
		if err != nil {
			fatal(err)
		}
		ref, err := check.Reference(cfg, s, w, in)
		if err != nil {
			fatal(err)
		}
		for _, v := range vs {
			dts := []string{"float32"}
			if c.inner && !seenX[v.x] {
				seenX[v.x] = true
				dts = append(dts, "bfloat16")
			}
			for _, dt := range dts {
				cfg.Dtype = dt
				o, err := check.VerifyWith(d, cfg, w, in, ref, v.opt())
				verdict := "PASS"
				if err != nil {
					verdict, fails = "ERROR "+err.Error(), fails+1
				} else if !o.Pass() {
					verdict, fails = fmt.Sprintf("FAIL (tol %.g, %d NaN)", o.Tol, o.NaN), fails+1
				}
				fmt.Printf("%-9s %-8s %-9s %-5d %-10.3g %-10.3g %s\n", v.tag(), dt, cfg.Phase(), c.L, o.RelL2, o.MaxAbs, verdict)
				vrows = append(vrows, map[string]any{"tag": v.tag(), "dtype": dt, "phase": cfg.Phase(), "L": c.L,
					"rel_l2": o.RelL2, "max_abs": o.MaxAbs, "nan": o.NaN, "verdict": verdict, "describe": o.Describe})
			}
		}
	}
	if train {
		f, rows := verifyExchangeTrain(d, vs, size)
		fails += f
		vrows = append(vrows, rows...)
	}
	fmt.Printf("\nexchange timing, %s B=1 L=%d K=16 float32, %d timed calls after 3 warmup (device events), %d rounds\n", size, L, repeats, rounds)
	fmt.Printf("%-9s %-5s %-10s %-9s %-9s %s\n", "tag", "round", "phase", "median", "min", "cycles/step by part")
	var trows []map[string]any
	medians := map[string][]float64{}
	for r := 0; r < rounds; r++ {
		for _, v := range vs {
			cfg := check.Config(size, "linear", "float32", true, 1, L)
			row := map[string]any{"tag": v.tag(), "round": r, "phase": cfg.Phase()}
			t, err := check.Time(d, cfg, 3, repeats, v.opt())
			if err != nil {
				fmt.Printf("%-9s %-5d %-10s ERROR %v\n", v.tag(), r, cfg.Phase(), err)
				row["error"] = err.Error()
				trows = append(trows, row)
				continue
			}
			tk, terr := ticks(d, cfg, v.opt())
			if terr != nil {
				row["ticks_error"] = terr.Error()
			}
			fmt.Printf("%-9s %-5d %-10s %-9.4f %-9.4f %v\n", v.tag(), r, cfg.Phase(), t.Median, t.Min, tk)
			row["median_ms"], row["min_ms"], row["samples_ms"], row["ticks_per_step"], row["describe"] = t.Median, t.Min, t.Samples, tk, t.Describe
			medians[v.tag()] = append(medians[v.tag()], t.Median)
			trows = append(trows, row)
		}
	}
	for _, v := range vs {
		cfg := check.Config(size, "linear", "float32", false, 1, L)
		row := map[string]any{"tag": v.tag(), "phase": cfg.Phase()}
		t, err := check.Time(d, cfg, 3, repeats, v.opt())
		if err != nil {
			fmt.Printf("%-9s %-5s %-10s ERROR %v\n", v.tag(), "-", cfg.Phase(), err)
			row["error"] = err.Error()
		} else {
			fmt.Printf("%-9s %-5s %-10s %-9.4f %-9.4f\n", v.tag(), "-", cfg.Phase(), t.Median, t.Min)
			row["median_ms"], row["min_ms"], row["samples_ms"], row["describe"] = t.Median, t.Min, t.Samples, t.Describe
		}
		trows = append(trows, row)
	}
	fmt.Printf("\nsummary: inner-only float32 median ms per round\n")
	for _, v := range vs {
		fmt.Printf("  %-9s %v\n", v.tag(), medians[v.tag()])
	}
	return map[string]any{"verify": vrows, "timing": trows}, fails
}

// verifyExchangeTrain checks the training step, whose forward records the
// inner state from the cluster kernel, at tiny (B=2 L=64) and size (B=1
// L=128) float32 with the default options and with each exchange of vs at
// the cluster size the training step picks (one float64 step each).
func verifyExchangeTrain(d *gpu.Device, vs []exchangeVariant, size string) (int, []map[string]any) {
	fails := 0
	var rows []map[string]any
	fmt.Printf("\ntraining step against the CPU float64 step (float32, worst relative L2 of logits and gradients)\n")
	for _, sz := range []struct {
		size string
		B, L int
	}{{"tiny", 2, 64}, {size, 1, 128}} {
		if sz.size == "tiny" && sz.B == 1 {
			continue
		}
		cfg := check.Config(sz.size, "linear", "float32", false, sz.B, sz.L)
		cfg.Backward = true
		s, w, in, err := check.Inputs(cfg, 11)
		if err != nil {
			fatal(err)
		}
		ref, err := check.TrainReference(cfg, s, w, in)
		if err != nil {
			fatal(err)
		}
		opts := map[string]gputtt.Options{"default": {}}
		for _, v := range vs {
			opts[fmt.Sprintf("x%d", v.x)] = gputtt.Options{Exchange: v.x}
		}
		for _, tag := range []string{"default", "x1", "x2", "x3"} {
			opt, ok := opts[tag]
			if !ok {
				continue
			}
			o, err := check.VerifyTrain(d, cfg, w, in, ref, opt)
			name, worst := o.Worst()
			verdict := "PASS"
			switch {
			case err != nil:
				verdict, fails = "ERROR "+err.Error(), fails+1
			case !o.Pass():
				verdict, fails = fmt.Sprintf("FAIL (tol %.g)", o.Tol), fails+1
			}
			fmt.Printf("train %-5s %-8s L=%-4d worst %-10.3g (%s) %s\n", sz.size, tag, sz.L, worst, name, verdict)
			rows = append(rows, map[string]any{"tag": "train-" + tag, "size": sz.size, "dtype": "float32", "phase": "backward",
				"L": sz.L, "B": sz.B, "worst_rel_l2": worst, "worst": name, "verdict": verdict, "describe": o.Describe})
		}
	}
	return fails, rows
}
