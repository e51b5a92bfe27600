package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/report"
	"github.com/xbench/xbench/harness/store"
)

func calibrateCmd(ctx context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("calibrate", pflag.ContinueOnError)
	var c commonFlags
	var device, dtypeList, runID string
	c.register(fs)
	fs.Lookup("backends").Usage = "the one backend to measure through (default pytorch)"
	fs.StringVar(&device, "device", "auto", "device: "+deviceAllowed)
	fs.StringVar(&dtypeList, "dtypes", "float32,tf32,bfloat16,float16", "comma-separated dtypes to measure the matmul peak of ("+strings.Join(dtypes, ", ")+")")
	fs.StringVar(&runID, "run-id", "", "store beside this run's results (default: a new run id)")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	name := c.backends
	if name == "" {
		name = "pytorch"
	}
	if strings.Contains(name, ",") {
		return usagef("--backends %q: calibrate measures through one backend", name)
	}
	device, gpu, err := parseDevice(device)
	if err != nil {
		return err
	}
	var want []string
	for _, d := range strings.Split(dtypeList, ",") {
		d = strings.TrimSpace(d)
		if err := oneOf("--dtypes", d, dtypes); err != nil {
			return err
		}
		want = append(want, d)
	}
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	base, _ := backend.SplitName(name)
	if _, ok := reg.Manifest(base); !ok {
		return usagef("--backends %q: unknown backend (allowed: %s)", name, strings.Join(reg.Names(), ", "))
	}
	if err := requireInstalled(reg, base); err != nil {
		return err
	}
	if runID == "" {
		runID = newRunID()
	}
	meta, env := withRocm(sessionMeta(root, reg), pinEnv(gpu), device)
	sess := bench.NewSession(reg, runID, meta, env)
	defer sess.Close()
	b, _, err := sess.Backend(ctx, base)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "calibrate: measuring %s on %s through %s ...\n", strings.Join(want, ", "), deviceText(device, gpu), base)
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err = calibrateThrough(cctx, b, base, backend.CalibrateRequest{Device: device, Dtypes: want}, c.resultsDir, runID, a.Stdout)
	return err
}

// calibrateThrough asks b for the device's ceilings, stores them as
// <resultsDir>/<runID>/_calibration.json and prints them.
func calibrateThrough(ctx context.Context, b backend.Backend, name string, req backend.CalibrateRequest, resultsDir, runID string, w io.Writer) (string, error) {
	cb, ok := b.(backend.Calibrator)
	var cal backend.Calibration
	err := backend.ErrCannotCalibrate
	if ok {
		cal, err = cb.Calibrate(ctx, req)
	}
	if errors.Is(err, backend.ErrCannotCalibrate) {
		why := strings.TrimPrefix(strings.TrimPrefix(err.Error(), backend.ErrCannotCalibrate.Error()), ": ")
		if why != "" && !strings.Contains(why, "cannot calibrate") {
			why = " (" + why + ")"
		} else {
			why = ""
		}
		return "", &ExitError{Code: 1, Msg: fmt.Sprintf("backend %s cannot calibrate%s; use a backend that implements it, e.g. --backends pytorch", name, why)}
	}
	if err != nil {
		return "", fmt.Errorf("calibrate through %s: %w", name, err)
	}
	if len(cal.MatmulTFLOPs) == 0 && cal.CopyGBps == 0 {
		return "", fmt.Errorf("calibrate through %s: the backend measured nothing", name)
	}
	cal.Backend, cal.RunID, cal.Timestamp = name, runID, time.Now().UTC().Format(time.RFC3339)
	raw, err := json.MarshalIndent(cal, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode calibration: %w", err)
	}
	path := filepath.Join(resultsDir, runID, report.CalibrationFile)
	if err := store.WriteFileAtomic(path, append(raw, '\n')); err != nil {
		return "", err
	}
	writeCalibration(w, cal)
	fmt.Fprintf(w, "written to %s\n", path)
	return path, nil
}

func writeCalibration(w io.Writer, cal backend.Calibration) {
	fmt.Fprintf(w, "device: %s\nthrough: %s", deviceName(cal.Device.Kind, cal.Device.Name), cal.Backend)
	if cal.Method != "" {
		fmt.Fprintf(w, " (%s)", cal.Method)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ceiling\tvalue")
	var names []string
	for d := range cal.MatmulTFLOPs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		fmt.Fprintf(tw, "matmul %s\t%.4g TFLOP/s\n", d, cal.MatmulTFLOPs[d])
	}
	fmt.Fprintf(tw, "device-to-device copy\t%.4g GB/s\n", cal.CopyGBps)
	tw.Flush()
}

func deviceName(kind, name string) string {
	if name == "" {
		return kind
	}
	return kind + " (" + name + ")"
}
