package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/export"
	"github.com/xbench/xbench/harness/store"
)

var exportFormats = []string{"csv", "benchfmt"}

func exportCmd(_ context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("export", pflag.ContinueOnError)
	var resultsDir, format, out string
	fs.StringVar(&resultsDir, "results", defaultResults, "results folder, read recursively, or a .tar.gz of one (xbench pack) or a folder in it (the default is where run, sweep and compare write and look: one default for every command)")
	fs.StringVar(&format, "format", "csv", "output format: csv (one row per result), benchfmt (Go benchmark format, for benchstat)")
	fs.StringVarP(&out, "out", "o", "-", "file to write (- for stdout)")
	fs.SetOutput(a.Stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			fmt.Fprintf(a.Stdout, "Usage: xbench export [flags] [RUN_ID|DIR]\n  (a run id or folder narrows --results to it)\n%s%s", fs.FlagUsages(), workloadFlagsHelp(fs))
			return nil
		}
		return usagef("%s (see xbench export --help)", err)
	}
	if err := checkResultsFlag(fs); err != nil {
		return err
	}
	if err := oneOf("--format", format, exportFormats); err != nil {
		return err
	}
	dir := resultsDir
	switch fs.NArg() {
	case 0:
	case 1:
		d, err := compare.Resolve(fs.Arg(0), resultsDir)
		if err != nil {
			return usagef("%s", err)
		}
		dir = d
	default:
		return usagef("xbench export takes at most one argument (a run id or folder), got %d", fs.NArg())
	}
	rs, skipped, err := store.ReadAll(dir)
	if err != nil {
		return err
	}
	warnSkipped(a, skipped)
	if len(rs) == 0 {
		return fmt.Errorf("export %s: no results in it", dir)
	}
	var w io.Writer = a.Stdout
	var f *os.File
	if out != "-" {
		if f, err = os.Create(out); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer f.Close()
		w = f
	}
	switch format {
	case "csv":
		err = export.CSV(w, rs)
	case "benchfmt":
		var skipped int
		skipped, err = export.Benchfmt(w, rs)
		if skipped > 0 {
			fmt.Fprintf(a.Stderr, "export: %d results without samples (oom, unsupported, failed) have no benchfmt form; they are in --format csv\n", skipped)
		}
	}
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return fmt.Errorf("export: close %s: %w", out, err)
		}
		fmt.Fprintf(a.Stderr, "export: %d results written to %s\n", len(rs), out)
	}
	return nil
}
