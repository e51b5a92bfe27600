package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/verify"
	"github.com/xbench/xbench/harness/workload"
)

func verifyCmd(ctx context.Context, a *App, args []string) error {
	wl, err := workloadArg(args)
	if err != nil {
		return err
	}
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	var w workloadFlags
	var c commonFlags
	var dump string
	var seed int64
	var small map[string]string
	if s, ok := wl.(workload.Smaller); ok {
		small = s.SmallDefaults()
	}
	w.register(fs, wl, false, small)
	c.register(fs)
	fs.StringVar(&dump, "dump", "", "keep weights, inputs and every backend's outputs in this folder")
	fs.Int64Var(&seed, "seed", 1, "seed of the weights and the inputs")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if _, grads := wl.(workload.MultiOutput); w.backward && !grads {
		// A workload that names no gradients among its outputs would be
		// graded on its forward output alone, which --backward would misstate.
		return usagef("--backward: verify compares forward outputs (logits) or --inner-only outputs; gradients are not compared")
	}
	job, err := w.one(fs)
	if err != nil {
		return err
	}
	if err := c.checkWritable(); err != nil {
		return err
	}
	cfg, device := job.Config, job.Device
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	refName := workload.ReferenceBackendOf(wl)
	if _, ok := reg.Manifest(refName); refName != "" && !ok {
		return fmt.Errorf("verify --workload %s needs the %s backend for its float64 reference, and it is not in this checkout", wl.Name(), refName)
	}
	dir := dump
	if dir == "" {
		if dir, err = os.MkdirTemp("", "xbench-verify-*"); err != nil {
			return fmt.Errorf("create verify folder: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create --dump folder %s: %w", dir, err)
	}
	sess := a.newSession(reg, root, pinEnv(job.GPU), job.Device)
	defer sess.Close()
	names, err := selectBackends(ctx, a, reg, sess, c.backends, c.timeout, wl.Name())
	if err != nil {
		return err
	}
	rows, err := verify.Run(ctx, sess, verify.Plan{Workload: wl, Config: cfg, Device: device, Backends: names, Seed: seed, Dir: dir,
		Progress: func(i, n int, name string) {
			fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s on %s ...\n", i+1, n, name, cfg.Dtype(), deviceText(device, job.GPU))
		}})
	if err != nil {
		return err
	}
	writeVerifyTable(a.Stdout, rows, wl, cfg)
	if err := verify.WriteRecord(c.resultsDir, verify.Record{RunID: sess.RunID, Config: cfg, Rows: rows}); err != nil {
		return err
	}
	var failed []string
	for _, r := range rows {
		if r.Verdict == verify.Fail || r.Verdict == verify.Error {
			failed = append(failed, r.Backend)
		}
	}
	if len(failed) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("verification failed for %s", strings.Join(failed, ", "))}
	}
	return nil
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
