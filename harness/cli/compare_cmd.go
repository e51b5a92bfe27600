package cli

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/workload"
)

// RegressionExit is compare's exit code when a backend got significantly
// slower beyond --threshold (or stopped producing results).
const RegressionExit = 3

func compareCmd(_ context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	var resultsDir, threshold string
	fs.StringVar(&resultsDir, "results", defaultResults, "folder that run ids are looked up in (the arguments may also be folders, .tar.gz archives of them, or folders in those)")
	fs.StringVar(&threshold, "threshold", "5%", "slowdown that fails the comparison when significant (5% or 0.05)")
	help, err := parseFlagsArgs(a, fs, args, "A B", 2)
	if help || err != nil {
		return err
	}
	th, err := parseThreshold("--threshold", threshold)
	if err != nil {
		return err
	}
	var sets [2]*compare.Set
	for i, arg := range fs.Args() {
		dir, err := compare.Resolve(arg, resultsDir)
		if err != nil {
			return usagef("%s", err)
		}
		if sets[i], err = compare.Load(dir); err != nil {
			return err
		}
		warnSkipped(a, sets[i].Skipped)
	}
	if err := compare.CheckModes(sets[0], sets[1]); err != nil {
		return usagef("compare: %v", err)
	}
	tab := compare.Compare(sets[0], sets[1])
	if err := tab.Write(a.Stdout, th); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	if reg := tab.Regressions(th); len(reg) > 0 {
		var names []string
		for _, r := range reg {
			what := fmt.Sprintf("%.2fx", r.Ratio)
			if r.Verdict == compare.Broken {
				what = string(r.StatusB)
			}
			names = append(names, fmt.Sprintf("%s on %s (%s)", r.Backend, compare.Label(r.Config), what))
		}
		if len(names) > 5 {
			names = append(names[:5], fmt.Sprintf("and %d more", len(names)-5))
		}
		return &ExitError{Code: RegressionExit, Msg: fmt.Sprintf("%d regression(s) beyond %s: %s",
			len(reg), threshold, strings.Join(names, "; "))}
	}
	return nil
}

// parseThreshold accepts "5%" or "0.05" for flag: a finite fraction >= 0.
// NaN passes a "< 0" test and compares false with every ratio, so it would
// turn a regression gate off; it is refused like an infinite or negative
// one, with exit 2 naming the flag.
func parseThreshold(flag, s string) (float64, error) {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(v, 64)
	if pct {
		f /= 100
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, usagef("%s %q is not a finite non-negative fraction (allowed: e.g. 5%% or 0.05)", flag, workload.Cut(s, 80))
	}
	return f, nil
}

// parseFlagsArgs is parseFlags for commands that take n positional
// arguments (named in usage) after their flags.
func parseFlagsArgs(a *App, fs *pflag.FlagSet, args []string, usage string, n int) (help bool, err error) {
	fs.SetOutput(a.Stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			fmt.Fprintf(a.Stdout, "Usage: xbench %s [flags] %s\n%s%s", fs.Name(), usage, fs.FlagUsages(), workloadFlagsHelp(fs))
			return true, nil
		}
		return false, usagef("%s (see xbench %s --help)", err, fs.Name())
	}
	if fs.NArg() != n {
		return false, usagef("xbench %s takes %d arguments (%s), got %d", fs.Name(), n, usage, fs.NArg())
	}
	return false, checkResultsFlag(fs)
}
