package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// runApp runs one xbench invocation in-process and returns its output and
// exit code as main would see them.
func runApp(t *testing.T, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	app := &App{Stdout: &out, Stderr: &errb}
	err = app.Run(context.Background(), args)
	return out.String(), errb.String(), ExitCode(err), err
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// smallSweep is the 125m linear part of the standard sweep: 16 results.
func smallSweep(runID string) []result.Result {
	var out []result.Result
	for _, r := range sweeptest.Sweep(runID) {
		if r.Config.Get(ttt.KeyModelSize) == "125m" && r.Config.Get(ttt.KeyTTTType) == "linear" {
			out = append(out, r)
		}
	}
	return out
}

func writeRun(t *testing.T, dir string, rs []result.Result) {
	t.Helper()
	if err := sweeptest.Write(dir, rs); err != nil {
		t.Fatal(err)
	}
}

func TestCompareGolden(t *testing.T) {
	dir := t.TempDir()
	a := smallSweep("run-a")
	writeRun(t, dir, a)
	writeRun(t, dir, sweeptest.Scaled(a, 1.3, "run-slow"))
	// mixed: burnstyle-hip 20% faster, pytorch 2% slower, one result lost
	// to oom and one configuration new in B.
	var mixed []result.Result
	for _, r := range a {
		f := 0.8
		if r.Backend == "pytorch" {
			f = 1.02
		}
		r = sweeptest.Scaled([]result.Result{r}, f, "run-mixed")[0]
		if r.Backend == "burnstyle-hip" && r.Config.Int(ttt.KeySeqLen) == 4096 && r.Config.Phase == "backward" {
			r.Status, r.Message, r.SamplesMs = result.StatusOOM, "out of memory", []float64{}
			r = sweeptest.Finalize(r)
		}
		mixed = append(mixed, r)
	}
	mixed = append(mixed, sweeptest.Run("run-mixed", sweeptest.Backends[0], sweeptest.Config("125m", "linear", false, 8192), 99))
	writeRun(t, dir, mixed)

	tests := []struct {
		name string
		args []string
		code int
	}{
		{"compare_same", []string{"run-a", "run-a"}, 0},
		{"compare_slower", []string{"run-a", "run-slow"}, 3},
		{"compare_slower_threshold", []string{"--threshold", "35%", "run-a", filepath.Join(dir, "run-slow")}, 0},
		{"compare_mixed", []string{"run-a", "run-mixed"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, code, err := runApp(t, append([]string{"compare", "--results", dir}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.code)
			}
			got := strings.ReplaceAll(out, dir, "$RESULTS")
			if err != nil {
				got += fmt.Sprintf("\nexit %d: %s\n", code, err)
			}
			golden(t, tt.name+".golden", got)
		})
	}
}

func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, smallSweep("run-a"))
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "x.json"), []byte(`{"backend": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"one argument", []string{"run-a"}, 2, "takes 2 arguments"},
		{"unknown run", []string{"run-a", "nope"}, 2, `"nope" is neither a results folder, an archive nor a run id`},
		{"bad threshold", []string{"--threshold", "fast", "run-a", "run-a"}, 2, "--threshold"},
		// NaN compares false with every ratio: accepted, it would turn the gate off
		{"NaN threshold", []string{"--threshold", "NaN", "run-a", "run-a"}, 2, `--threshold "NaN"`},
		{"NaN% threshold", []string{"--threshold", "nan%", "run-a", "run-a"}, 2, `--threshold "nan%"`},
		{"infinite threshold", []string{"--threshold", "+Inf", "run-a", "run-a"}, 2, `--threshold "+Inf"`},
		{"negative threshold", []string{"--threshold", "-1%", "run-a", "run-a"}, 2, `--threshold "-1%"`},
		{"unknown flag", []string{"--colour", "run-a", "run-a"}, 2, "unknown flag"},
		{"invalid result", []string{"run-a", bad}, 1, "x.json"},
		{"empty folder", []string{"run-a", t.TempDir()}, 1, "no results"},
	}
	for _, tt := range tests {
		_, _, code, err := runApp(t, append([]string{"compare", "--results", dir}, tt.args...)...)
		if code != tt.code || err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: exit %d, error %v; want exit %d mentioning %q", tt.name, code, err, tt.code, tt.msg)
		}
	}
}

// TestCompareRefusesMixedModes: a warm run against a cold-cache run of the
// same cells is refused with exit 2 naming both modes, not compared; the
// same runs in one mode compare as before.
func TestCompareRefusesMixedModes(t *testing.T) {
	dir := t.TempDir()
	warm, cold := filepath.Join(dir, "warm"), filepath.Join(dir, "cold")
	writeRun(t, warm, smallSweep("run-warm"))
	coldRs := smallSweep("run-cold")
	for i := range coldRs {
		coldRs[i].Mode = result.Mode{ColdCache: true}
	}
	writeRun(t, cold, coldRs)
	_, _, code, err := runApp(t, "compare", warm, cold)
	if code != 2 || err == nil {
		t.Fatalf("compare warm cold: exit %d, error %v; want exit 2", code, err)
	}
	for _, want := range []string{"timed warm", "cold-cache", "do not pair", fmt.Sprintf("%d pair(s) differ", len(coldRs))} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, _, code, err := runApp(t, "compare", cold, cold); code != 0 {
		t.Errorf("compare cold cold: exit %d (%v), want 0", code, err)
	}
}
