package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
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
	if w.backward {
		return usagef("--backward: verify compares forward outputs (logits) or --inner-only outputs; gradients are not compared")
	}
	job, err := w.one(fs)
	if err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	cfg, device := job.Config, job.Device
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	refName := wl.ReferenceBackend()
	if _, ok := reg.Manifest(refName); refName != "" && !ok {
		return fmt.Errorf("verify needs the %s backend for its float64 reference, and it is not in this checkout", refName)
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
	sess := a.newSession(reg, root)
	defer sess.Close()
	names, err := selectBackends(ctx, a, reg, sess, c.backends, c.timeout, wl.Name())
	if err != nil {
		return err
	}
	fx, files, err := writeFixtures(wl, dir, cfg, seed)
	if err != nil {
		return err
	}
	want, err := reference(ctx, sess, wl, cfg, fx, files, dir)
	if err != nil {
		return err
	}
	var rows []verify.Row
	for i, name := range names {
		fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s on %s ...\n", i+1, len(names), name, cfg.Dtype(), device)
		rows = append(rows, verifyOne(ctx, sess, wl, name, device, cfg, files, dir, want))
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

// fixtureFiles are where the weights (may be "") and inputs were written.
type fixtureFiles struct{ weights, inputs string }

// writeFixtures writes the workload's deterministic weights and inputs.
func writeFixtures(wl workload.Workload, dir string, cfg result.Config, seed int64) (workload.Fixtures, fixtureFiles, error) {
	fx, err := wl.Fixtures(cfg, seed)
	if err != nil {
		return fx, fixtureFiles{}, fmt.Errorf("make %s fixtures: %w", wl.Name(), err)
	}
	files := fixtureFiles{inputs: filepath.Join(dir, "inputs.safetensors")}
	if len(fx.Weights) > 0 {
		files.weights = filepath.Join(dir, "weights.safetensors")
		if err := tensorfile.Write(files.weights, fx.Weights); err != nil {
			return fx, files, err
		}
	}
	return fx, files, tensorfile.Write(files.inputs, fx.Inputs)
}

// reference is the float64 output every backend is graded against: the
// workload's own, or its reference backend's float64 export on the CPU.
func reference(ctx context.Context, sess *bench.Session, wl workload.Workload, cfg result.Config, fx workload.Fixtures, files fixtureFiles, dir string) (tensorfile.Tensor, error) {
	name := wl.ReferenceBackend()
	if name == "" {
		t, err := wl.Reference(cfg, fx)
		if err != nil {
			return t, fmt.Errorf("%s reference: %w", wl.Name(), err)
		}
		return t, nil
	}
	refCfg := cfg.With("dtype", "float64")
	out := filepath.Join(dir, "reference-float64.safetensors")
	b, _, err := sess.Backend(ctx, name)
	if err != nil {
		return tensorfile.Tensor{}, fmt.Errorf("reference %s float64: %w", name, err)
	}
	resp, err := b.Export(ctx, exportRequest("", "cpu", refCfg, files, out))
	if err != nil {
		return tensorfile.Tensor{}, fmt.Errorf("reference %s float64: %w", name, err)
	}
	if resp.Status != result.StatusOK {
		return tensorfile.Tensor{}, fmt.Errorf("reference %s float64: %s: %s", name, resp.Status, resp.Message)
	}
	m, err := tensorfile.Read(out)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	t, ok := m[wl.Output(cfg)]
	if !ok {
		return tensorfile.Tensor{}, fmt.Errorf("reference %s: %s has no tensor %q", name, out, wl.Output(cfg))
	}
	return t, nil
}

func exportRequest(variant, device string, cfg result.Config, files fixtureFiles, out string) backend.ExportRequest {
	return backend.ExportRequest{Workload: cfg.Workload, Variant: variant, Device: device, Config: cfg,
		WeightsPath: files.weights, InputsPath: files.inputs, OutputPath: out}
}

func verifyOne(ctx context.Context, sess *bench.Session, wl workload.Workload, full, device string, cfg result.Config, files fixtureFiles, dir string, want tensorfile.Tensor) verify.Row {
	row := verify.Row{Backend: full, Device: device, Dtype: cfg.Dtype(), Tolerance: wl.Tolerance(cfg)}
	name, variant := backend.SplitName(full)
	b, info, err := sess.Backend(ctx, name)
	if err != nil {
		row.Verdict, row.Message = verify.Error, err.Error()
		return row
	}
	caps, err := info.CapabilitiesOf(variant)
	if err == nil {
		if why := caps.Unsupported(device, cfg); why != "" {
			row.Verdict, row.Message = verify.Unsupported, why
			return row
		}
	}
	out := filepath.Join(dir, strings.ReplaceAll(full, "/", "+")+".safetensors")
	resp, err := b.Export(ctx, exportRequest(variant, device, cfg, files, out))
	if err != nil {
		sess.Restart(name)
		row.Verdict, row.Message = verify.Error, err.Error()
		return row
	}
	row.Device = resp.Device.Kind
	if resp.Device.Name != "" {
		row.Device += " (" + resp.Device.Name + ")"
	}
	if resp.Status != result.StatusOK {
		row.Verdict, row.Message = verify.Unsupported, resp.Message
		if resp.Status != result.StatusUnsupported {
			row.Verdict = verify.Error
		}
		return row
	}
	return verify.Check(row, out, wl.Output(cfg), want)
}

func writeVerifyTable(w io.Writer, rows []verify.Row, wl workload.Workload, cfg result.Config) {
	ref := wl.ReferenceBackend()
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
