package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/check"
)

// trainCase is one training step (--phase backward) to verify.
type trainCase struct {
	size, typ, backbone string
	B, L                int
	dtypes              []string
	opt                 gpu.Options
}

// trainCases are the training steps gpucheck verifies: the mamba backbone's
// (its conv block, shared-Q/K convolutions and output gate backward).
var trainCases = []trainCase{
	{"tiny", "linear", "mamba", 2, 64, []string{"float32", "bfloat16"}, gpu.Options{}},
	{"tiny", "mlp", "mamba", 2, 64, []string{"float32", "bfloat16"}, gpu.Options{}},
	{"125m", "linear", "mamba", 1, 128, []string{"float32", "bfloat16"}, gpu.Options{}},
	{"125m", "mlp", "mamba", 1, 128, []string{"float32", "bfloat16"}, gpu.Options{}},
	{"125m", "linear", "mamba", 2, 256, []string{"float32"}, gpu.Options{Eager: true}},
}

// verifyTrain runs each training step of trainCases whose size contains
// only against the CPU model's float64 step: the logits, the loss and
// every parameter's gradient, graded by the worst relative L2 at the
// workload's tolerance. bfloat16 is graded against the reference at its
// bf16-rounded weights, the point it evaluates (the weights' rounding alone
// moves small gradients such as lr_b's by ~5%).
func verifyTrain(d *gpu.Device, only string) (rows []map[string]any, fails int) {
	fmt.Printf("\n%-5s %-6s %-11s %-8s %-5s %-24s %-10s %-10s %s\n", "size", "type", "backbone", "dtype", "L",
		"worst", "rel_l2", "loss_err", "verdict")
	for _, c := range trainCases {
		if !strings.Contains(c.size, only) {
			continue
		}
		for _, dt := range c.dtypes {
			cfg := check.Config(c.size, c.typ, dt, false, c.B, c.L)
			cfg.Backward, cfg.Backbone = true, c.backbone
			row := map[string]any{"size": c.size, "type": c.typ, "backbone": c.backbone, "dtype": dt, "phase": cfg.Phase(),
				"B": c.B, "L": c.L, "eager": c.opt.Eager}
			o, refMs, err := verifyTrainCase(d, c, dt)
			verdict := "PASS"
			if err != nil {
				verdict, fails = "ERROR "+err.Error(), fails+1
			} else if !o.Pass() {
				verdict, fails = fmt.Sprintf("FAIL (tol %.g)", o.Tol), fails+1
			}
			name, worst := o.Worst()
			lossErr := 0.0
			if o.RefLoss != 0 {
				lossErr = (o.Loss - o.RefLoss) / o.RefLoss
			}
			fmt.Printf("%-5s %-6s %-11s %-8s %-5d %-24s %-10.3g %-10.3g %s\n", c.size, c.typ, c.backbone, dt, c.L,
				name, worst, lossErr, verdict)
			grads := map[string]float64{}
			for _, g := range o.Grads {
				grads[g.Name] = g.RelL2
			}
			row["worst"], row["rel_l2"], row["loss"], row["ref_loss"] = name, worst, o.Loss, o.RefLoss
			row["logits_rel_l2"], row["grads_rel_l2"], row["verdict"] = o.Logits.RelL2, grads, verdict
			row["ref_ms"], row["describe"] = refMs, o.Describe
			rows = append(rows, row)
		}
	}
	return rows, fails
}

func verifyTrainCase(d *gpu.Device, c trainCase, dtype string) (check.TrainOutcome, float64, error) {
	cfg := check.Config(c.size, c.typ, dtype, false, c.B, c.L)
	cfg.Backward, cfg.Backbone = true, c.backbone
	s, w, in, err := check.Inputs(cfg, 11)
	if err != nil {
		return check.TrainOutcome{}, 0, err
	}
	if dtype == "bfloat16" {
		if w, err = check.RoundedBF16(w); err != nil {
			return check.TrainOutcome{}, 0, err
		}
	}
	t0 := time.Now()
	ref, err := check.TrainReference(cfg, s, w, in)
	if err != nil {
		return check.TrainOutcome{}, 0, err
	}
	refMs := time.Since(t0).Seconds() * 1e3
	o, err := check.VerifyTrain(d, cfg, w, in, ref, c.opt)
	return o, refMs, err
}
