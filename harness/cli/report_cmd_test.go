package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/workload"
)

// TestReportTwoBackends is the acceptance check: a report of a
// two-backend sweep is an HTML file whose charts name both backends.
func TestReportTwoBackends(t *testing.T) {
	dir := t.TempDir()
	if _, err := sweeptest.WriteStandard(dir, "run-1"); err != nil {
		t.Fatal(err)
	}
	// An unreadable file and an ok result with a negative sample: skipped,
	// each named on stderr, as every reader of results does.
	broken := filepath.Join(dir, "run-1", "broken.json")
	negative := filepath.Join(dir, "run-1", "negative.json")
	if err := os.WriteFile(broken, []byte(`{"status": "ok"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(negative, []byte(negativeResult), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	_, stderr, code, err := runApp(t, "report", "--results", dir, "--out", out, "--baseline", "burnstyle-hip")
	if code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if !strings.Contains(stderr, "2 backends, 32 configurations") {
		t.Errorf("stderr %q", stderr)
	}
	for _, f := range []string{broken, negative} {
		if !strings.Contains(stderr, "warning: skipped result "+f) {
			t.Errorf("stderr does not name the skipped %s: %q", f, stderr)
		}
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"burnstyle-hip", "pytorch"} {
		if strings.Count(string(page), ">"+b+"</text>") < 6 {
			t.Errorf("the page's charts name %s fewer than 6 times", b)
		}
		svg, err := os.ReadFile(filepath.Join(filepath.Dir(out), "report-roofline.svg"))
		if err != nil || !strings.Contains(string(svg), ">"+b+", float32</text>") {
			t.Errorf("roofline svg does not name %s: %v", b, err)
		}
	}
	for _, bad := range [][]string{{"--results", filepath.Join(dir, "nope")}, {"--results", dir, "--baseline"}, {"--results", dir, "extra"}, {"--results", dir, "--out", filepath.Join(dir, "r.txt")}} {
		if _, _, code, _ := runApp(t, append([]string{"report"}, bad...)...); code != 2 {
			t.Errorf("report %v: exit %d, want 2", bad, code)
		}
	}
	if _, _, code, err := runApp(t, "report", "--results", dir, "--out", out, "--baseline", "jax"); code != 2 || !strings.Contains(err.Error(), "jax") {
		t.Errorf("unknown baseline: exit %d %v, want 2", code, err)
	}
	pdf := filepath.Join(t.TempDir(), "r.pdf")
	if _, _, code, err := runApp(t, "report", "--results", dir, "--out", pdf); code != 0 {
		t.Fatalf("--out r.pdf: exit %d %v", code, err)
	}
	if raw, err := os.ReadFile(pdf); err != nil || !strings.HasPrefix(string(raw), "%PDF-") {
		t.Errorf("--out r.pdf wrote no PDF: %v", err)
	}
}

// A calibration from another folder gives an attention sweep's report the
// percent of peak; a file that is no calibration is a usage error.
func TestReportCalibrationFlag(t *testing.T) {
	cal := t.TempDir()
	if err := sweeptest.WriteCalibration(cal, sweeptest.Calibration("cal-1")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	results := filepath.Join("..", "..", "results", "h100-attention", "sweep")
	if _, _, code, err := runApp(t, "report", "--results", results, "--out", out,
		"--calibration", filepath.Join(cal, "cal-1", "_calibration.json")); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "percent of the calibrated matmul peak") || !regexp.MustCompile(`>[0-9]+ \([0-9]+%\)</text>`).Match(page) {
		t.Errorf("the throughput against seq_len chart has no percent of peak")
	}
	if _, _, code, _ := runApp(t, "report", "--results", results, "--out", out, "--calibration", filepath.Join(results, "_plan.json")); code != 2 {
		t.Errorf("--calibration of a plan: exit %d, want 2", code)
	}
}

// negativeResult is an ok result whose second sample is negative.
const negativeResult = `{"schema_version": 2, "run_id": "x", "backend": "liar", "status": "ok",
 "config": {"workload": "gemm", "phase": "forward", "params": {"m": "8", "n": "8", "k": "8", "batch": "1", "layout": "nn", "dtype": "float32"}, "warmup": 3, "repeats": 2},
 "device": {"kind": "cpu", "name": "c", "count": 1}, "samples_ms": [1, -1], "compile_ms": 0, "throughput": 0,
 "peak_memory_bytes": 0, "num_params": 0, "env": {"framework": "go", "timing": "wall"}, "timestamp": "2026-01-01T00:00:00Z"}`

// TestReportVerifyFlag: the attention sweep's verification is kept beside
// it (results/h100-attention/verify); --verify brings it into the report,
// which then no longer says nothing was verified. A folder without
// records is an error naming the flag.
func TestReportVerifyFlag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	root := filepath.Join("..", "..", "results", "h100-attention")
	if _, _, code, err := runApp(t, "report", "--results", filepath.Join(root, "sweep"), "--out", out,
		"--verify", filepath.Join(root, "verify")); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "No verify records in this folder") || !strings.Contains(string(page), ">pass <span") {
		t.Errorf("--verify did not bring the verify records into the report")
	}
	if _, _, code, err := runApp(t, "report", "--results", filepath.Join(root, "sweep"), "--out", out,
		"--verify", t.TempDir()); code != 2 || !strings.Contains(err.Error(), "--verify") {
		t.Errorf("--verify of an empty folder: exit %d (%v), want 2 naming the flag", code, err)
	}
}

// TestHelpSaysWhereWorkloadFlagsLive: every command's --help ends by
// naming how to see a workload's flags, and report and export default to
// the folder run, sweep and compare use.
func TestHelpSaysWhereWorkloadFlagsLive(t *testing.T) {
	for _, cmd := range []string{"run", "sweep", "verify", "profile", "calibrate", "report", "compare", "export", "history"} {
		out, _, code, err := runApp(t, cmd, "--help")
		if code != 0 {
			t.Errorf("%s --help: exit %d (%v)", cmd, code, err)
			continue
		}
		if !strings.Contains(out, "--workload NAME --help") {
			t.Errorf("%s --help does not say where workload flags live:\n%s", cmd, out)
		}
		if (cmd == "report" || cmd == "export") && !strings.Contains(out, `(default "results/local")`) {
			t.Errorf("%s --help: default results folder is not results/local", cmd)
		}
	}
}

// TestCPUWarnsOfGPUSizedDefaults: attention's defaults on --device cpu
// get a warning naming CPU-sized flags; set flags and cuda get none.
func TestCPUWarnsOfGPUSizedDefaults(t *testing.T) {
	wl, err := workload.Lookup("attention")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(args ...string) (*pflag.FlagSet, *workloadFlags) {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		var w workloadFlags
		w.register(fs, wl, false, nil)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs, &w
	}
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--device", "cpu"}, true},
		{[]string{"--device", "cuda"}, false},
	} {
		var errb strings.Builder
		fs, w := mk(tc.args...)
		warnGPUSizedDefaults(&App{Stderr: &errb}, fs, wl, w.device)
		if got := strings.Contains(errb.String(), "sized for a GPU") && strings.Contains(errb.String(), "--seq-len"); got != tc.warn {
			t.Errorf("%v: warned %v (%q), want %v", tc.args, got, errb.String(), tc.warn)
		}
	}
	// Every size set by hand: nothing to warn about.
	var all []string
	for k, v := range wl.(workload.Smaller).SmallDefaults() {
		all = append(all, "--"+strings.ReplaceAll(k, "_", "-"), v)
	}
	var errb strings.Builder
	fs, w := mk(append(all, "--device", "cpu")...)
	warnGPUSizedDefaults(&App{Stderr: &errb}, fs, wl, w.device)
	if errb.Len() != 0 {
		t.Errorf("sizes given, still warned: %s", errb.String())
	}
}
