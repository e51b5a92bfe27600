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
	"github.com/xbench/xbench/harness/workload/ttt"
)

// ReferenceBackend computes the float64 reference every backend is graded against.
const ReferenceBackend = "burnstyle-hip"

func verifyCmd(ctx context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	var w workloadFlags
	var c commonFlags
	var dump string
	var seed int64
	w.register(fs, "tiny")
	c.register(fs)
	_ = fs.Set("seq-len", "64")
	fs.Lookup("seq-len").DefValue = "64"
	fs.StringVar(&dump, "dump", "", "keep weights, inputs and every backend's outputs in this folder")
	fs.Int64Var(&seed, "seed", 1, "seed of the perturbed weights and the inputs")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if w.backward {
		return usagef("--backward: verify compares forward outputs (logits) or --inner-only outputs; gradients are not compared")
	}
	cfg, err := w.config()
	if err != nil {
		return err
	}
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	if _, ok := reg.Manifest(ReferenceBackend); !ok {
		return fmt.Errorf("verify needs the %s backend for its float64 reference, and it is not in this checkout", ReferenceBackend)
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
	names, err := selectBackends(ctx, a, reg, sess, c.backends)
	if err != nil {
		return err
	}
	fx, err := writeFixtures(dir, cfg, seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "reference: %s float64 on cpu (%s)\n", ReferenceBackend, describe(cfg))
	refCfg := cfg
	refCfg.Dtype = "float64"
	want, err := exportOne(ctx, sess, ReferenceBackend, "cpu", refCfg, fx, filepath.Join(dir, "reference-float64.safetensors"))
	if err != nil {
		return fmt.Errorf("reference %s float64: %w", ReferenceBackend, err)
	}
	var rows []verify.Row
	for i, name := range names {
		fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s on %s ...\n", i+1, len(names), name, cfg.Dtype, w.device)
		rows = append(rows, verifyOne(ctx, sess, name, w.device, cfg, fx, dir, want))
	}
	writeVerifyTable(a.Stdout, rows, cfg)
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

type fixtures struct{ weights, inputs string }

// writeFixtures writes perturbed weights and inputs: weights away from their
// initial values, so bugs in norm weights and biases cannot hide.
func writeFixtures(dir string, cfg result.Config, seed int64) (fixtures, error) {
	size, err := ttt.LookupSize(cfg.ModelSize)
	if err != nil {
		return fixtures{}, err
	}
	fx := fixtures{weights: filepath.Join(dir, "weights.safetensors"), inputs: filepath.Join(dir, "tokens.safetensors")}
	if err := tensorfile.Write(fx.weights, ttt.PerturbedWeights(size, cfg.TTTType, cfg.MiniBatch, cfg.Backbone, seed)); err != nil {
		return fixtures{}, err
	}
	inputs := map[string]tensorfile.Tensor{"tokens": ttt.RandomTokens(seed, cfg.Batch, cfg.SeqLen, size.Vocab)}
	if cfg.InnerOnly {
		inputs = ttt.RandomInnerInputs(seed, cfg.Batch, size.Heads, cfg.SeqLen, size.HeadDim)
	}
	return fx, tensorfile.Write(fx.inputs, inputs)
}

func exportOne(ctx context.Context, sess *bench.Session, full, device string, cfg result.Config, fx fixtures, out string) (tensorfile.Tensor, error) {
	name, variant := backend.SplitName(full)
	b, _, err := sess.Backend(ctx, name)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	resp, err := b.Export(ctx, backend.ExportRequest{Workload: cfg.Workload, Variant: variant, Device: device, Config: cfg,
		WeightsPath: fx.weights, InputsPath: fx.inputs, OutputPath: out})
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	if resp.Status != result.StatusOK {
		return tensorfile.Tensor{}, fmt.Errorf("%s: %s", resp.Status, resp.Message)
	}
	m, err := tensorfile.Read(out)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	t, ok := m[verify.OutputName(cfg.InnerOnly)]
	if !ok {
		return tensorfile.Tensor{}, fmt.Errorf("%s has no tensor %q", out, verify.OutputName(cfg.InnerOnly))
	}
	return t, nil
}

func verifyOne(ctx context.Context, sess *bench.Session, full, device string, cfg result.Config, fx fixtures, dir string, want tensorfile.Tensor) verify.Row {
	row := verify.Row{Backend: full, Device: device, Dtype: cfg.Dtype, Tolerance: verify.Tolerance(cfg.Dtype)}
	name, variant := backend.SplitName(full)
	b, info, err := sess.Backend(ctx, name)
	if err != nil {
		row.Verdict, row.Message = verify.Error, err.Error()
		return row
	}
	caps, err := info.CapabilitiesOf(variant)
	if err == nil {
		if why := caps.Unsupported(cfg.Workload, device, cfg); why != "" {
			row.Verdict, row.Message = verify.Unsupported, why
			return row
		}
	}
	out := filepath.Join(dir, strings.ReplaceAll(full, "/", "+")+".safetensors")
	resp, err := b.Export(ctx, backend.ExportRequest{Workload: cfg.Workload, Variant: variant, Device: device, Config: cfg,
		WeightsPath: fx.weights, InputsPath: fx.inputs, OutputPath: out})
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
	return verify.Check(row, out, verify.OutputName(cfg.InnerOnly), want)
}

func writeVerifyTable(w io.Writer, rows []verify.Row, cfg result.Config) {
	fmt.Fprintf(w, "verify %s against %s float64 (relative L2 error)\n", describe(cfg), ReferenceBackend)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\tdevice\tdtype\trel L2\tmax abs\ttolerance\tverdict\tnotes")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3e\t%.3e\t%.0e\t%s\t%s\n", r.Backend, r.Device, r.Dtype, r.RelL2, r.MaxAbs, r.Tolerance, r.Verdict, firstLine(r.Message))
	}
	tw.Flush()
}
