package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBudget(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		msg  string // a refusal's words, "" for none
	}{
		{"", 0, ""},
		{"15", 15 * time.Minute, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"43200", 30 * 24 * time.Hour, ""},
		{"0", 0, "is not positive"},
		{"-5", 0, "is not positive"},
		{"-1h", 0, "is not positive"},
		{"NaN", 0, "is not positive"},
		{"1e300", 0, `--budget "1e300" is too large (allowed: minutes as a number, e.g. 15, or a duration such as 90s or 1h30m; more than 0 and at most 30 days)`},
		{"+Inf", 0, "is too large"},
		{"43201", 0, "is too large"},
		{"721h", 0, "is too large"},
		{"soon", 0, "is not a time"},
	}
	for _, tt := range tests {
		got, err := parseBudget(tt.in)
		var ue *UsageError
		switch {
		case tt.msg == "" && (err != nil || got != tt.want):
			t.Errorf("parseBudget(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.msg != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tt.msg)):
			t.Errorf("parseBudget(%q) error %v, want a usage error saying %q", tt.in, err, tt.msg)
		}
	}
}

// --results with a newline or another control character is refused (exit
// 2, naming the flag and what is allowed) by every command that has it, as
// the problem workload's --problems is.
func TestResultsFlagRefusesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{dir + "/a\nb", dir + "/tab\there", dir + "/esc\x1b[31m"} {
		for _, args := range [][]string{
			{"report", "--results", bad},
			{"export", "--results", bad},
			{"compare", "--results", bad, "a", "b"},
			{"problems", "score", "--baseline", "x.json", "--results", bad},
			{"sweep", "--results", bad, "--backends", "pytorch"},
		} {
			_, _, code, err := runApp(t, args...)
			if code != 2 || err == nil || !strings.Contains(err.Error(), "--results") ||
				!strings.Contains(err.Error(), "without control characters") {
				t.Errorf("%s %q: exit %d, %v; want 2 naming --results and what is allowed", args[0], bad, code, err)
			}
		}
	}
}

// --method is checked, and what KernelBench's method fixes (cold L2, 4
// untimed calls) cannot be set otherwise beside it; each refusal is exit 2
// before any backend starts or any folder is made.
func TestProblemsMethodFlag(t *testing.T) {
	cands := t.TempDir()
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--method", "fast"}, `--method "fast" is not allowed (allowed: xbench, kernelbench)`},
		{[]string{"--method", "kernelbench", "--cold-cache=false"}, "--method kernelbench was combined with --cold-cache=false"},
		{[]string{"--method", "kernelbench", "--warmup", "2"}, "--method kernelbench was combined with --warmup 2"},
	}
	for _, tt := range tests {
		results := filepath.Join(t.TempDir(), "r")
		args := append([]string{"problems", "candidates", "--candidates", cands, "--results", results, "--device", "cpu"}, tt.args...)
		_, _, code, err := runApp(t, args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%v: exit %d, %v; want 2 saying %q", tt.args, code, err, tt.msg)
		}
		if _, err := os.Stat(results); err == nil {
			t.Errorf("%v: the results folder was made before the flags were checked", tt.args)
		}
	}
}
