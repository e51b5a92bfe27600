package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/report"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
)

func reportCmd(_ context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	var resultsDir, out, baseline string
	var calibrations, verifies []string
	fs.StringVar(&resultsDir, "results", defaultResults, "results folder (or one run's folder), read recursively, or a .tar.gz of one (xbench pack) or a folder in it (default: where run, sweep and compare write and look; the committed H100 data is under results/h100*, one archive per campaign)")
	fs.StringVarP(&out, "out", "o", "report.html", "HTML file to write (charts go beside it as <name>-<chart>.svg and .png, tables as <name>-<table>.csv), or a .pdf file: one PDF with the charts and tables")
	fs.StringVar(&baseline, "baseline", "", "backend that ratios and fast_p compare against (default: pytorch if present, else the first by name)")
	fs.StringSliceVar(&calibrations, "calibration", nil, "a _calibration.json from outside --results (xbench calibrate on the same device model in another run), for the roofline and percent of peak; repeatable")
	fs.StringSliceVar(&verifies, "verify", nil, "a folder outside --results holding xbench verify records (_verify_*.json) for these results (a sweep's verify run kept beside it); repeatable")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if !store.IsTree(resultsDir) {
		return usagef("--results %q is not a folder or archive (allowed: a results folder, a .tar.gz archive of one)", resultsDir)
	}
	r, err := report.Load(resultsDir, "")
	if err != nil {
		return err
	}
	warnSkipped(a, r.Skipped)
	for _, c := range calibrations {
		if err := r.AddCalibration(c); err != nil {
			return usagef("--calibration %q: %v", workload.Cut(c, 200), err)
		}
	}
	for _, d := range verifies {
		if err := r.AddVerify(d); err != nil {
			return usagef("--verify %q: %v", workload.Cut(d, 200), err)
		}
	}
	if baseline != "" {
		if err := r.SetBaseline(baseline); err != nil {
			return usagef("--baseline %q has no results in %s (backends: %s)", baseline, resultsDir, strings.Join(r.Backends, ", "))
		}
	}
	write := r.Write
	switch ext := strings.ToLower(filepath.Ext(out)); ext {
	case ".pdf":
		write = r.WritePDF
	case ".html", ".htm":
	default:
		return usagef("--out %q: the format comes from the extension; allowed: .html, .htm, .pdf", workload.Cut(out, 80))
	}
	files, err := write(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "report: %d results of %d backends, %d configurations; wrote %s and %d files beside it\n",
		len(r.Results), len(r.Backends), len(r.Configs), out, len(files)-1)
	return nil
}
