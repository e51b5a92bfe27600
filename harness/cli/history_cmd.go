package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/history"
	"github.com/xbench/xbench/harness/report"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
)

func historyCmd(_ context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("history", pflag.ContinueOnError)
	var out, csvPath, failOn, repo string
	var logY bool
	fs.StringVar(&out, "out", "", "write the dashboard (index.html, one page per workload, series.csv) into this folder")
	fs.StringVar(&csvPath, "csv", "", "write every series as CSV to this file (- for stdout)")
	fs.StringVar(&failOn, "fail-on-regression", "", "exit 3 when the newest run sits on a step up beyond this (5% or 0.05)")
	fs.BoolVar(&logY, "log", false, "draw every dashboard chart's time axis on a log scale (default: only charts whose values span more than 10x)")
	fs.StringVar(&repo, "repo", ".", "git checkout whose commit dates order the runs (runs whose commit it lacks go by timestamp)")
	fs.SetOutput(a.Stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			fmt.Fprintf(a.Stdout, "Usage: xbench history [flags] DIR...   (one result folder per run, e.g. results/nightly/*)\n%s%s", fs.FlagUsages(), workloadFlagsHelp(fs))
			return nil
		}
		return usagef("%s (see xbench history --help)", workload.Cut(err.Error(), 200))
	}
	if fs.NArg() == 0 {
		return usagef("xbench history takes one or more result folders (allowed: DIR..., one per run)")
	}
	frac := -1.0
	if failOn != "" {
		f, err := parseThreshold("--fail-on-regression", failOn)
		if err != nil {
			return err
		}
		frac = f
	}
	for _, d := range fs.Args() {
		if !store.IsTree(d) {
			return usagef("result folder %q is not a folder or archive (allowed: existing result folders, .tar.gz archives of them)", workload.Cut(d, 80))
		}
	}
	h, err := history.Build(fs.Args(), history.Options{CommitDate: gitCommitDate(repo)})
	if err != nil {
		return err
	}
	warnSkipped(a, h.Skipped)
	writeHistorySummary(a, h)
	if out != "" {
		files, err := report.WriteDashboard(h, out, report.DashboardOptions{LogY: logY})
		if err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "dashboard: %d files in %s (open %s/index.html)\n", len(files), out, out)
	}
	if csvPath != "" {
		w := a.Stdout
		if csvPath != "-" {
			f, err := os.Create(csvPath)
			if err != nil {
				return fmt.Errorf("history: write --csv %s: %w", csvPath, err)
			}
			defer f.Close()
			w = f
		}
		if err := h.WriteCSV(w); err != nil {
			return err
		}
	}
	if frac >= 0 {
		if reg := h.Regressions(frac); len(reg) > 0 {
			var lines []string
			for _, r := range reg {
				lines = append(lines, r.String())
			}
			return &ExitError{Code: RegressionExit, Msg: fmt.Sprintf("%d series regressed beyond %s at the newest run: %s",
				len(reg), failOn, strings.Join(lines, "; "))}
		}
	}
	return nil
}

// writeHistorySummary prints the runs and every step found.
func writeHistorySummary(a *App, h *history.History) {
	fmt.Fprintf(a.Stdout, "%d runs, %d series, %s to %s\n", len(h.Runs), len(h.Series),
		h.Runs[0].Date.UTC().Format(time.DateOnly), h.Runs[len(h.Runs)-1].Date.UTC().Format(time.DateOnly))
	if h.DateNote != "" {
		fmt.Fprintf(a.Stdout, "note: %s\n", h.DateNote)
	}
	steps := 0
	for _, s := range h.Series {
		for _, st := range s.Steps {
			steps++
			kind, first, last := "regression", "first bad", "last good"
			if st.Ratio < 1 {
				kind, first, last = "improvement", "first faster", "last slower"
			}
			fmt.Fprintf(a.Stdout, "%s %+.1f%% (95%% CI %+.1f%% to %+.1f%%) %s %s %s on %s, %s: %s %.12s (%s), %s %.12s\n",
				kind, 100*(st.Ratio-1), 100*(st.Lo-1), 100*(st.Hi-1), s.Backend, s.Workload, s.Label, s.Device, s.Mode,
				first, h.Runs[st.FirstBad].Commit, h.Runs[st.FirstBad].Dir, last, h.Runs[st.LastGood].Commit)
		}
	}
	if steps == 0 {
		fmt.Fprintln(a.Stdout, "no steps: every series is level")
	}
}

// gitCommitDate looks commits up in repo with git; a commit git does not
// know (or no git at all) is not an error: the run is ordered by timestamp.
// A "-dirty" commit (a run from a modified tree) is dated by its base commit.
func gitCommitDate(repo string) func(string) (time.Time, bool) {
	return func(commit string) (time.Time, bool) {
		commit = strings.TrimSuffix(commit, "-dirty")
		if commit == "" || strings.HasPrefix(commit, "-") {
			return time.Time{}, false
		}
		out, err := exec.Command("git", "-C", repo, "show", "-s", "--format=%cI", commit+"^{commit}", "--").Output()
		if err != nil {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
		return t, err == nil
	}
}
