package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/history/historytest"
)

// TestHistoryGate: twenty nights, pytorch at 256 20% slower over the last
// three. --fail-on-regression exits 3 naming it below the step's size, 0
// above it; bad input exits 2 naming the flag; --out and --csv write the
// dashboard and every point.
func TestHistoryGate(t *testing.T) {
	root := t.TempDir()
	dirs, err := historytest.Nightly(root, 20, func(night int, b, m string) float64 {
		if b == "pytorch" && m == "256" && night >= 17 {
			return 1.2
		}
		return 1
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := func(extra ...string) []string { return append(append([]string{"history"}, extra...), dirs...) }

	stdout, _, code, err := runApp(t, args("--fail-on-regression", "5%", "--repo", root)...)
	if code != RegressionExit || err == nil || !strings.Contains(err.Error(), "pytorch gemm") ||
		!strings.Contains(err.Error(), historytest.Commit(17)[:12]) {
		t.Errorf("5%% gate: exit %d, error %v; want %d naming pytorch and commit %s", code, err, RegressionExit, historytest.Commit(17))
	}
	if !strings.Contains(stdout, "20 runs, 9 series") || strings.Count(stdout, "regression +") != 1 || !strings.Contains(stdout, "ordered by their results' timestamp") {
		t.Errorf("summary:\n%s", stdout)
	}
	if _, _, code, err := runApp(t, args("--fail-on-regression", "30%")...); code != 0 {
		t.Errorf("30%% gate: exit %d (%v), want 0", code, err)
	}
	out, csv := filepath.Join(root, "site"), filepath.Join(root, "series.csv")
	if _, _, code, err := runApp(t, args("--out", out, "--csv", csv)...); code != 0 {
		t.Fatalf("--out --csv: exit %d (%v)", code, err)
	}
	for _, f := range []string{"index.html", "gemm.html", "series.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("dashboard file %s: %v", f, err)
		}
	}
	raw, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(raw), "\n"); rows != 1+9*20 {
		t.Errorf("CSV has %d lines, want a header and 180 points", rows)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history"}, "one or more result folders"},
		{args("--fail-on-regression", "lots"), `--fail-on-regression "lots"`},
		{args("--fail-on-regression", "NaN%"), `--fail-on-regression "NaN%"`},
		{args("--fail-on-regression", "Inf"), `--fail-on-regression "Inf"`},
		{args("--fail-on-regression", "-0.05"), `--fail-on-regression "-0.05"`},
		{[]string{"history", filepath.Join(root, "nope")}, "is not a folder"},
	} {
		if _, _, code, err := runApp(t, tc.args...); code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, error %v; want 2 naming %q", tc.args[1:], code, err, tc.want)
		}
	}
}

// TestGitCommitDate: a commit of this checkout is dated by git, also when
// recorded as "-dirty"; an unknown one, or an option-like one, is not.
func TestGitCommitDate(t *testing.T) {
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	date := gitCommitDate("../..")
	c := strings.TrimSpace(string(head))
	for _, tc := range []struct {
		commit string
		ok     bool
	}{{c, true}, {c + "-dirty", true}, {"0000000000000000000000000000000000000bad", false}, {"--all", false}, {"", false}} {
		if d, ok := date(tc.commit); ok != tc.ok || ok && d.IsZero() {
			t.Errorf("commit %q: date %v, %v; want found %v", tc.commit, d, ok, tc.ok)
		}
	}
}
