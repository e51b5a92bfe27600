package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
)

func TestExportGolden(t *testing.T) {
	dir := t.TempDir()
	c := sweeptest.Config("125m", "linear", false, 512)
	ok := sweeptest.Run("run-e", sweeptest.Backends[0], c, 1)
	ok.SamplesMs, ok.Config.Repeats = ok.SamplesMs[:3], 3
	ok = sweeptest.Finalize(ok)
	oom := sweeptest.Run("run-e", sweeptest.Backends[1], sweeptest.Config("350m", "mlp", true, 4096), 2)
	writeRun(t, dir, []result.Result{ok, oom})
	for _, format := range []string{"csv", "benchfmt"} {
		out, stderr, code, err := runApp(t, "export", "--results", dir, "--format", format, "run-e")
		if code != 0 {
			t.Fatalf("%s: exit %d: %v", format, code, err)
		}
		if format == "benchfmt" && !strings.Contains(stderr, "1 results without samples") {
			t.Errorf("benchfmt stderr %q should count the oom result", stderr)
		}
		golden(t, "export_"+format+".golden", out)
	}
	file := filepath.Join(t.TempDir(), "x.txt")
	if _, _, code, err := runApp(t, "export", "--results", dir, "--format", "benchfmt", "--out", file); code != 0 {
		t.Fatalf("--out: exit %d: %v", code, err)
	}
	if raw, err := os.ReadFile(file); err != nil || !strings.Contains(string(raw), "BenchmarkTTT/backend=burnstyle-hip") {
		t.Errorf("--out file: %v %q", err, raw)
	}
	for _, bad := range [][]string{{"--format", "xml"}, {"a", "b"}, {"nope"}} {
		if _, _, code, _ := runApp(t, append([]string{"export", "--results", dir}, bad...)...); code != 2 {
			t.Errorf("export %v: exit %d, want 2", bad, code)
		}
	}
}

// A file whose stats contradict its samples: export shows the samples'
// median, never the stored one.
func TestExportRecomputesStoredStats(t *testing.T) {
	dir := t.TempDir()
	liar := sweeptest.Finalize(sweeptest.Run("run-l", sweeptest.Backends[0], sweeptest.Config("125m", "linear", false, 512), 1))
	st := *liar.Stats
	st.MedianMs, st.MeanMs = 0.000123, 0.000123
	liar.Stats = &st
	writeRun(t, dir, []result.Result{liar})
	out, _, code, err := runApp(t, "export", "--results", dir, "--format", "csv", "run-l")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if strings.Contains(out, "0.000123") {
		t.Errorf("export shows the stored, false median:\n%s", out)
	}
}
