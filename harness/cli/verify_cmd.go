package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/verify"
	"github.com/xbench/xbench/harness/workload"
)

// verification is one parsed `xbench verify` configuration: from the
// command line, or from one line of a --plan file.
type verification struct {
	wl   workload.Workload
	c    commonFlags
	job  Job
	dump string
	seed int64
	plan string // --plan: the configurations are the file's lines
}

func verifyCmd(ctx context.Context, a *App, args []string) error {
	v, help, err := parseVerification(a, args)
	if help || err != nil {
		return err
	}
	if v.plan != "" {
		return verifyPlan(ctx, a, v, args)
	}
	if err := v.c.checkWritable(); err != nil {
		return err
	}
	reg, root, err := a.openRegistry(&v.c)
	if err != nil {
		return err
	}
	sess := a.newSession(reg, root, pinEnv(v.job.GPU), v.job.Device)
	defer sess.Close()
	failed, err := runVerification(ctx, a, reg, sess, v)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("verification failed for %s", strings.Join(failed, ", "))}
	}
	return nil
}

// parseVerification checks every flag of one configuration, before any
// backend starts. With --plan it checks only the command line's flags: the
// configurations are the plan's lines, each checked by verifyPlan.
func parseVerification(a *App, args []string) (*verification, bool, error) {
	wl, err := workloadArg(args)
	if err != nil {
		return nil, false, err
	}
	v := &verification{wl: wl}
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	var w workloadFlags
	var small map[string]string
	if s, ok := wl.(workload.Smaller); ok {
		small = s.SmallDefaults()
	}
	w.register(fs, wl, false, small)
	v.c.register(fs)
	fs.StringVar(&v.dump, "dump", "", "keep weights, inputs and every backend's outputs in this folder")
	fs.Int64Var(&v.seed, "seed", 1, "seed of the weights and the inputs")
	fs.StringVar(&v.plan, "plan", "", "verify every configuration of this file, one line of verify flags each, in one invocation whose backend processes serve them all (see the note below)")
	if help, err := parseFlagsHelp(a, fs, args, verifyPlanHelp); help || err != nil {
		return nil, help, err
	}
	if fs.Changed("plan") && v.plan == "" {
		return nil, false, usagef("--plan \"\" is empty (allowed: a file of verify configurations, one per line)")
	}
	if _, grads := wl.(workload.MultiOutput); w.backward && !grads {
		// A workload that names no gradients among its outputs would be
		// graded on its forward output alone, which --backward would misstate.
		return nil, false, usagef("--backward: verify compares forward outputs (logits) or --inner-only outputs; gradients are not compared")
	}
	if v.job, err = w.one(fs); err != nil {
		return nil, false, err
	}
	return v, false, nil
}

// runVerification verifies one configuration on sess's backends and
// prints its table; failed names the backends that failed or broke. An
// error means no verdict was reached (fixtures, reference, selection).
func runVerification(ctx context.Context, a *App, reg *registry.Registry, sess *bench.Session, v *verification) (failed []string, err error) {
	cfg, device := v.job.Config, v.job.Device
	refName := workload.ReferenceBackendOf(v.wl)
	if _, ok := reg.Manifest(refName); refName != "" && !ok {
		return nil, fmt.Errorf("verify --workload %s needs the %s backend for its float64 reference, and it is not in this checkout", v.wl.Name(), refName)
	}
	dir := v.dump
	if dir == "" {
		if dir, err = os.MkdirTemp("", "xbench-verify-*"); err != nil {
			return nil, fmt.Errorf("create verify folder: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create --dump folder %s: %w", dir, err)
	}
	names, err := selectBackends(ctx, a, reg, sess, v.c.backends, v.c.startBound(), v.wl.Name())
	if err != nil {
		return nil, err
	}
	rows, err := verify.Run(ctx, sess, verify.Plan{Workload: v.wl, Config: cfg, Device: device, Backends: names, Seed: v.seed, Dir: dir,
		Progress: func(i, n int, name string) {
			fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s on %s ...\n", i+1, n, name, cfg.Dtype(), deviceText(device, v.job.GPU))
		}})
	if err != nil {
		return nil, err
	}
	writeVerifyTable(a.Stdout, rows, v.wl, cfg)
	if err := verify.WriteRecord(v.c.resultsDir, verify.Record{RunID: sess.RunID, Config: cfg, Rows: rows}); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Verdict == verify.Fail || r.Verdict == verify.Error {
			failed = append(failed, r.Backend)
		}
	}
	return failed, nil
}

func writeVerifyTable(w io.Writer, rows []verify.Row, wl workload.Workload, cfg result.Config) {
	ref := workload.ReferenceBackendOf(wl)
	if ref == "" {
		ref = "the harness's"
	}
	fmt.Fprintf(w, "verify %s against %s float64 (relative L2 error)\n", describe(cfg), ref)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tdevice\tdtype\trel L2\tmax abs\ttolerance\tverdict\tnotes")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3e\t%.3e\t%.0e\t%s\t%s\n", r.Backend, r.Device, r.Dtype, r.RelL2, r.MaxAbs, r.Tolerance, r.Verdict, firstLine(r.Message))
	}
	tw.Flush()
}
