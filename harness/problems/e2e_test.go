package problems_test

// End to end on the CPU: the real xbench binary, the real pytorch and
// candidates backends, the shipped problem set (eager only: compile on a
// CPU takes seconds per problem).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/xbench/xbench/harness/internal/testbin"
	"github.com/xbench/xbench/harness/problems"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
)

var (
	repoRoot = func() string {
		_, f, _, _ := runtime.Caller(0)
		return filepath.Clean(filepath.Join(filepath.Dir(f), "../.."))
	}()
	buildOnce sync.Once
	bin       string
	buildErr  error
)

func xbench(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xbench-problems-e2e-*")
		if err != nil {
			buildErr = err
			return
		}
		bin, buildErr = testbin.Build(repoRoot, dir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = repoRoot
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func TestBaselineCandidatesScoreOnCPU(t *testing.T) {
	tmp := t.TempDir()
	timing := filepath.Join(tmp, "timing")
	sweepDir := filepath.Join(tmp, "sweep")
	out, errs, err := xbench(t, "problems", "baseline", "--hardware", "cpu-test", "--device", "cpu", "--backends", "pytorch",
		"--warmup", "1", "--repeats", "3", "--results", sweepDir, "--out", timing)
	if err != nil {
		t.Fatalf("baseline: %v\n%s\n%s", err, out, errs)
	}
	path := filepath.Join(timing, "baseline_time_torch.json")
	if strings.TrimSpace(out) != path {
		t.Errorf("baseline printed %q, want the one file %s", out, path)
	}
	b, err := problems.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b["level1"]) != 10 || len(b["level2"]) != 5 {
		t.Fatalf("baseline has %d level1 and %d level2 problems, want the shipped 10 and 5", len(b["level1"]), len(b["level2"]))
	}
	// The numbers are the sweep results' own statistics, unchanged by the file.
	rs, _, err := store.ReadAll(sweepDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		name := filepath.Base(mustFind(t, r))
		e := b[problems.LevelKey(r.Config.Int("level"))][name]
		if r.Status != result.StatusOK || e.Mean != r.Stats.MeanMs || e.Std != r.Stats.StdMs || e.Min != r.Stats.MinMs ||
			e.Max != r.Stats.MaxMs || e.NumTrials != 3 || e.Device != "cpu" || e.Hardware != r.Device.Name {
			t.Errorf("%s: file %+v, result %s %+v", name, e, r.Status, r.Stats)
		}
	}
	// Written again from what it read: byte for byte the same file.
	again := filepath.Join(tmp, "again.json")
	if err := problems.Write(again, b); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(path)
	y, _ := os.ReadFile(again)
	if string(x) != string(y) {
		t.Error("baseline file does not round-trip byte for byte")
	}

	for kind, want := range map[string]string{"right": "ok", "wrong": "failed"} {
		res := filepath.Join(tmp, kind)
		if out, errs, err := xbench(t, "problems", "candidates", "--candidates", "problems/candidates/"+kind, "--device", "cpu",
			"--warmup", "0", "--repeats", "3", "--results", res, "--problem", "1", "--level", "1,2"); err != nil {
			t.Fatalf("candidates %s: %v\n%s\n%s", kind, err, out, errs)
		}
		rs, _, err := store.ReadAll(res)
		if err != nil || len(rs) != 2 {
			t.Fatalf("candidates %s: %d results, %v", kind, len(rs), err)
		}
		for _, r := range rs {
			if string(r.Status) != want || (kind == "wrong" && !strings.HasPrefix(r.Message, "incorrect: max abs err ")) {
				t.Errorf("%s candidate %s: %s %q", kind, workload.Key(r.Config), r.Status, r.Message)
			}
			if r.Env.Settings["XBENCH_CANDIDATES_ATOL"] != "0.01" {
				t.Errorf("gate settings not recorded: %v", r.Env.Settings)
			}
		}
		out, errs, err = xbench(t, "problems", "score", "--baseline", path, "--results", res)
		if err != nil {
			t.Fatalf("score: %v\n%s", err, errs)
		}
		if kind == "right" {
			// The report copes with a workload of unknown cost and shows fast_p
			// of the candidates against pytorch when both are in one folder.
			html := filepath.Join(tmp, "report.html")
			if _, errs, err := xbench(t, "report", "--results", tmp, "--out", html); err != nil {
				t.Fatalf("report: %v\n%s", err, errs)
			}
			page, _ := os.ReadFile(html)
			if !strings.Contains(string(page), "fast_1.5") || !strings.Contains(string(page), "candidates") {
				t.Error("report has no fast_p table of the candidates")
			}
		}
		// Both sides name how they were timed (cold L2 on the host clock on
		// the CPU; the baseline with 1 warmup call, the candidates 0), and
		// the same method draws no warning.
		if !strings.Contains(out, "baseline timed: L2 cold, timer host-clock, 1 warmup calls, precision kernelbench") ||
			(kind == "right" && !strings.Contains(out, "results timed: L2 cold, timer host-clock, 0 warmup calls, precision kernelbench")) ||
			strings.Contains(errs, "timed by different methods") {
			t.Errorf("score of %s does not name the methods:\n%s\n%s", kind, out, errs)
		}
		// Right: 1 of 10 level1 and 1 of 5 level2 problems correct; wrong: none.
		wantLine := map[string]string{"right": "level1       10    0.100", "wrong": "level1       10    0.000"}[kind]
		if !strings.Contains(out, wantLine) {
			t.Errorf("score of %s lacks %q:\n%s", kind, wantLine, out)
		}
	}
}

func mustFind(t *testing.T, r result.Result) string {
	t.Helper()
	f, err := findProblem(r)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A problem that raises, one that kills its process and one that hangs
// are each one classified cell; the problems after them still run. The
// backend's (re)starts, each importing torch, are bounded on their own by
// --start-timeout, so a loaded machine cannot turn a fine problem into a
// timeout; --timeout bounds only a problem's run, which the hang exceeds
// (it costs exactly that long). A 4-element forward needs far less, but a
// problem's first run also imports what torch loads lazily, and on a fresh
// 2-core machine running every lane at once that once passed 10 s: 30 s
// leaves room and still ends the hang.
func TestCrashingProblemsAreCells(t *testing.T) {
	dir := t.TempDir()
	lv := filepath.Join(dir, "level1")
	os.MkdirAll(lv, 0o755)
	body := func(forward string) string {
		return "import os, time\nimport torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        " + forward +
			"\ndef get_inputs():\n    return [torch.ones(4)]\ndef get_init_inputs():\n    return []\n"
	}
	files := map[string]string{
		"1_fine.py":  body("return x * 2"),
		"2_raise.py": body("raise ValueError('bad shape')"),
		"3_exit.py":  body("os._exit(3)"),
		"4_hang.py":  body("time.sleep(600)"),
		"5_fine.py":  body("return x + 1"),
	}
	for n, b := range files {
		os.WriteFile(filepath.Join(lv, n), []byte(b), 0o644)
	}
	res := filepath.Join(t.TempDir(), "res")
	out, errs, err := xbench(t, "problems", "baseline", "--problems", dir, "--level", "1", "--hardware", "x", "--device", "cpu",
		"--backends", "pytorch", "--warmup", "0", "--repeats", "2", "--timeout", "30s", "--start-timeout", "5m", "--results", res, "--out", filepath.Join(t.TempDir(), "t"))
	if err != nil {
		t.Fatalf("baseline over a crashing set: %v\n%s\n%s", err, out, errs)
	}
	rs, _, err := store.ReadAll(res)
	if err != nil || len(rs) != 5 {
		t.Fatalf("%d results, %v", len(rs), err)
	}
	want := map[int]result.Status{1: result.StatusOK, 2: result.StatusFailed, 3: result.StatusFailed, 4: result.StatusTimeout, 5: result.StatusOK}
	for _, r := range rs {
		id := r.Config.Int("problem")
		if r.Status != want[id] {
			t.Errorf("problem %d: %s %q, want %s", id, r.Status, r.Message, want[id])
		}
		if id == 2 && r.Message != "ValueError: bad shape" {
			t.Errorf("problem 2 message %q", r.Message)
		}
	}
	if !strings.Contains(errs, "not in the baseline: pytorch level1/4: timeout") {
		t.Errorf("the hung problem is not named on stderr:\n%s", errs)
	}
}

// Through the real harness and backend process: cheating candidates are
// refused with their class in the result's message (the adversarial
// suite's files, plugins/candidates/tests/cheats), and the honest one
// after them is timed.
func TestCheatingCandidatesAreRefusedThroughTheHarness(t *testing.T) {
	set, cands := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(set, "level1"), filepath.Join(cands, "level1")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cheats := filepath.Join(repoRoot, "plugins", "candidates", "tests", "cheats")
	// problem id -> (problem file, candidate source)
	files := map[int][2]string{
		1: {"problems/level1/1_square_matmul.py", filepath.Join(cheats, "patched_perf_counter.py")},
		2: {"problems/level1/1_square_matmul.py", filepath.Join(cheats, "wrong_dtype.py")},
		3: {"problems/level1/1_square_matmul.py", filepath.Join(cheats, "right_then_wrong.py")},
		4: {"problems/level1/1_square_matmul.py", "problems/candidates/right/level1/1_square_matmul.py"},
	}
	for id, f := range files {
		name := fmt.Sprintf("%d_matmul.py", id)
		for _, cp := range [][2]string{{f[0], filepath.Join(set, "level1", name)}, {f[1], filepath.Join(cands, "level1", name)}} {
			src := cp[0]
			if !filepath.IsAbs(src) {
				src = filepath.Join(repoRoot, src)
			}
			raw, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cp[1], raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	res := filepath.Join(t.TempDir(), "res")
	if out, errs, err := xbench(t, "problems", "candidates", "--problems", set, "--candidates", cands, "--device", "cpu",
		"--level", "1", "--warmup", "0", "--repeats", "3", "--start-timeout", "5m", "--results", res); err != nil {
		t.Fatalf("candidates: %v\n%s\n%s", err, out, errs)
	}
	rs, _, err := store.ReadAll(res)
	if err != nil || len(rs) != 4 {
		t.Fatalf("%d results, %v", len(rs), err)
	}
	want := map[int]string{1: "patched clock: time.perf_counter replaced", 2: "wrong dtype: output 0 is torch.float16",
		3: "wrong after timing: incorrect: max abs err"}
	for _, r := range rs {
		id := r.Config.Int("problem")
		switch {
		case id == 4 && (r.Status != result.StatusOK || len(r.SamplesMs) != 3):
			t.Errorf("honest candidate: %s %q, %d samples", r.Status, r.Message, len(r.SamplesMs))
		case id != 4 && (r.Status != result.StatusFailed || !strings.HasPrefix(r.Message, want[id])):
			t.Errorf("cheat %d: %s %q, want failed %q", id, r.Status, r.Message, want[id])
		}
	}
}
