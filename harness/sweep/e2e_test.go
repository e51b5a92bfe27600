package sweep_test

// End-to-end tests: the real xbench binary, built once, with real plugin
// processes. The fault backend (harness/testdata/faultbackend) fails on
// purpose; the native backend (burnstyle-hip) runs on the CPU.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/internal/testbin"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/sweep"
)

var (
	repoRoot = func() string {
		_, f, _, _ := runtime.Caller(0)
		return filepath.Clean(filepath.Join(filepath.Dir(f), "../.."))
	}()
	faultDir  = filepath.Join(repoRoot, "harness", "testdata", "faultbackend")
	buildOnce sync.Once
	xbenchBin string
	buildErr  error
)

// xbench builds the binary once per test process.
func xbench(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xbench-sweep-e2e-*")
		if err != nil {
			buildErr = err
			return
		}
		xbenchBin, buildErr = testbin.Build(repoRoot, dir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return xbenchBin
}

type outcome struct {
	code           int
	stdout, stderr string
}

func runXbench(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(xbench(t), args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run xbench %v: %v", args, err)
	}
	return outcome{code, out.String(), errb.String()}
}

// readCSV returns the rows of `xbench sweep --csv`, keyed by the name of
// the cell's file. The CSV has no file column (it is export's format), so
// the name is rebuilt from the row's backend, workload, phase and parameter
// columns (those between phase and device_kind); every sweep here runs on
// --device cpu.
func readCSV(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	o := runXbench(t, nil, "sweep", "--results", dir, "--csv")
	if o.code != 0 {
		t.Fatalf("sweep --csv: exit %d\n%s", o.code, o.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(o.stdout)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("sweep --csv output is not CSV (%v):\n%s", err, o.stdout)
	}
	header := rows[0]
	first, last := slices.Index(header, "phase")+1, slices.Index(header, "device_kind")
	if first <= 0 || last < first {
		t.Fatalf("sweep --csv header lacks phase ... device_kind: %v", header)
	}
	out := map[string]map[string]string{}
	for _, row := range rows[1:] {
		rec := map[string]string{}
		for i, col := range header {
			rec[col] = row[i]
		}
		cfg := result.Config{Workload: rec["workload"], Phase: rec["phase"], Params: map[string]string{}}
		for _, col := range header[first:last] {
			if rec[col] != "" {
				cfg.Params[col] = rec[col]
			}
		}
		file := sweep.Cell{Backend: rec["backend"], Device: "cpu", Config: cfg}.Key() + ".json"
		if _, dup := out[file]; dup {
			t.Errorf("cell %s appears twice in the CSV", file)
		}
		out[file] = rec
	}
	return out
}

// alive reports whether pid runs; a zombie (killed, not yet reaped by an
// init that may never reap) counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

// waitDead waits (without a time assertion: SIGKILL takes effect at once,
// the wait only covers the kernel's delivery) for every pid to be gone.
func waitDead(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("process %d (%s) survived", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
			_ = syscall.Kill(pid, syscall.SIGKILL) // do not leak it past the test
		}
	}
}

func readPids(t *testing.T, path string) []int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the hanging fault wrote no pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(raw)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %s: %v", path, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// pluginsOf lists the live plugin processes of binary bin.
func pluginsOf(bin string) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(raw, []byte(bin+"\x00__plugin")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Each fault is one cell. The backend's restarts after a crash are bounded
// on their own (--start-timeout), so on a loaded machine a slow Python
// start cannot turn the next cell into a timeout; --timeout bounds only
// each cell's run, which the hang alone exceeds. Cells go one by one
// (--cells-per-call 1): in a batch the hang would hold the batch for the
// sum of its cells' timeouts; the faults in batches are
// TestFaultsInABatchThroughRealProcesses's.
func TestFaultBackendEveryFaultIsOneCell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	pidFile := filepath.Join(t.TempDir(), "pids")
	o := runXbench(t, []string{"XBENCH_FAULT_PIDS=" + pidFile}, "sweep", "--env", "venv", "--plugin-path", faultDir,
		"--backends", "faulty", "--device", "cpu", "--model-size", "tiny", "--seq-len", "16,32,48,64,80,96,112,128",
		"--dtype", "float32,bfloat16,float16", "--warmup", "0", "--repeats", "3", "--timeout", "3s", "--start-timeout", "2m",
		"--cells-per-call", "1", "--results", dir)
	if o.code != 0 {
		t.Fatalf("the sweep must finish despite the faults: exit %d\n%s", o.code, o.stderr)
	}
	rows := readCSV(t, dir)
	if len(rows) != 24 {
		t.Errorf("%d cells in the CSV, want 24 (8 seq-lens x 3 dtypes)", len(rows))
	}
	tests := []struct {
		fault, dtype string
		seq          int
		status, msg  string
	}{
		{"none", "float32", 16, "ok", ""},
		{"crash", "float32", 32, "failed", "exit status 3"},
		{"garbage", "float32", 48, "failed", "not a JSON reply"},
		{"schema", "float32", 64, "failed", "does not match schema at /status"},
		{"NaN samples", "float32", 80, "failed", "NaN or Infinity"},
		{"negative samples", "float32", 96, "failed", "sample 0 is -1"},
		{"no samples", "float32", 112, "failed", "no samples"},
		{"oom status", "float32", 128, "oom", "ran out of memory"},
		{"hang", "bfloat16", 16, "timeout", "--timeout 3s"},
		{"after the hang", "bfloat16", 32, "skipped", "timed out"},
		{"oom error", "float16", 16, "oom", "CUDA out of memory"},
		{"after the oom", "float16", 128, "skipped", "ran out of memory"},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			file := fmt.Sprintf("faulty__ttt_forward_tiny_linear_1_%d_16_%s_transformer__cpu.json", tt.seq, tt.dtype)
			row, ok := rows[file]
			if !ok {
				t.Fatalf("no cell %s", file)
			}
			if row["status"] != tt.status || !strings.Contains(row["message"], tt.msg) {
				t.Errorf("status %q, message %q; want %q with %q", row["status"], row["message"], tt.status, tt.msg)
			}
		})
	}
	// The failed cells keep what the backend printed (result.Tail).
	for file, want := range map[string]string{
		"faulty__ttt_forward_tiny_linear_1_32_16_float32_transformer__cpu.json":  "crashing on purpose",
		"faulty__ttt_forward_tiny_linear_1_16_16_bfloat16_transformer__cpu.json": "hanging on purpose",
	} {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !strings.Contains(string(raw), want) {
			t.Errorf("%s does not keep the backend's last output %q (%v)", file, want, err)
		}
	}
	// The hung backend and the child it spawned are gone.
	waitDead(t, readPids(t, pidFile))
}

// Batches of 3 (the native plugin runs them in its process): a kill loses
// the batch in flight only, and the rerun runs it again.
func TestKilledSweepFinishesOnRerun(t *testing.T) {
	bin := xbench(t)
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "--backends", "burnstyle-hip", "--device", "cpu", "--model-size", "tiny",
		"--seq-len", "512,1024,2048", "--ttt-type", "linear,mlp", "--dtype", "float32,float64",
		"--warmup", "0", "--repeats", "3", "--cells-per-call", "3", "--results", dir}
	cmd := exec.Command(bin, args...)
	cmd.Dir = repoRoot
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGKILL two seconds in, or as soon as a first cell landed if that
	// takes longer, so the rerun always has both kinds of cells.
	start := time.Now()
	for {
		cells, _ := filepath.Glob(filepath.Join(dir, "burnstyle-hip__*.json"))
		if len(cells) > 0 && time.Since(start) >= 2*time.Second {
			break
		}
		if cmd.ProcessState != nil || time.Since(start) > 2*time.Minute {
			t.Fatalf("sweep ended or stalled before it could be killed:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitDead(t, pluginsOf(bin)) // Pdeathsig took the plugin with it
	before := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		if raw, err := os.ReadFile(f); err == nil && !strings.HasPrefix(filepath.Base(f), "_") {
			before[filepath.Base(f)] = string(raw)
		}
	}
	if len(before) == 0 || len(before) == 12 {
		t.Fatalf("%d of 12 cells finished before the kill; the test needs some of each:\n%s", len(before), log.String())
	}
	t.Logf("killed with %d of 12 cells finished", len(before))

	o := runXbench(t, nil, args...)
	if o.code != 0 {
		t.Fatalf("rerun: exit %d\n%s", o.code, o.stderr)
	}
	rows := readCSV(t, dir)
	if len(rows) != 12 {
		t.Errorf("%d cells after the rerun, want 12", len(rows))
	}
	for file, row := range rows {
		if row["status"] != "ok" || row["median_ms"] == "" {
			t.Errorf("%s: status %s, median %q", file, row["status"], row["median_ms"])
		}
	}
	for file, raw := range before {
		if now, _ := os.ReadFile(filepath.Join(dir, file)); string(now) != raw {
			t.Errorf("%s finished before the kill but was run again", file)
		}
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(tmps) != 0 {
		t.Errorf("temp files left: %v", tmps)
	}
	snap, err := sweep.Read(sweep.NewFolder(dir))
	if err != nil || len(snap.Invalid) != 0 || len(snap.Pending) != 0 {
		t.Errorf("folder after the rerun: %d invalid, %d pending (%v)", len(snap.Invalid), len(snap.Pending), err)
	}
}

// A child the backend started in a new session (setsid) leaves the
// backend's process group; xbench reaps it when the backend is closed.
func TestSetsidChildIsReaped(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	o := runXbench(t, []string{"XBENCH_FAULT_PIDS=" + pidFile}, "run", "--env", "venv", "--plugin-path", faultDir,
		"--backends", "faulty", "--device", "cpu", "--model-size", "tiny", "--seq-len", "4000", "--warmup", "0", "--repeats", "3",
		"--results", t.TempDir())
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	pids := readPids(t, pidFile)
	if len(pids) != 1 {
		t.Fatalf("want the setsid child's pid, got %v", pids)
	}
	waitDead(t, pids)
}

// Ctrl-C during `run` exits 130 and writes no result for the interrupted
// backend or for the ones not yet run (they never ran: no false "failed").
func TestRunInterruptedExits130AndWritesNothing(t *testing.T) {
	results := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(xbench(t), "run", "--env", "venv", "--plugin-path", faultDir, "--backends", "faulty,faulty,burnstyle-hip",
		"--device", "cpu", "--model-size", "tiny", "--seq-len", "16", "--dtype", "bfloat16", "--warmup", "0", "--repeats", "3",
		"--results", results)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "XBENCH_FAULT_PIDS="+pidFile)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The faulty backend hangs on bfloat16 and writes its pid once it does.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if raw, _ := os.ReadFile(pidFile); len(raw) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, errb.String())
	}
	files, _ := filepath.Glob(filepath.Join(results, "*", "*.json"))
	if len(files) != 0 {
		t.Errorf("interrupted run wrote %v", files)
	}
	waitDead(t, readPids(t, pidFile))
}

// When the result cannot be stored after it was measured (the folder is
// gone, the disk full), run prints it as JSON so nothing measured is lost,
// and exits non-zero naming the error.
func TestRunKeepsAResultItCannotStore(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	o := runXbench(t, []string{"XBENCH_FAULT_BREAK=" + results}, "run", "--env", "venv", "--plugin-path", faultDir,
		"--backends", "faulty", "--device", "cpu", "--model-size", "tiny", "--seq-len", "4016", "--warmup", "0", "--repeats", "3",
		"--results", results)
	if o.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", o.code, o.stderr)
	}
	var r result.Result
	line, _, _ := strings.Cut(strings.TrimSpace(o.stdout), "\n")
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Status != result.StatusOK || len(r.SamplesMs) != 3 {
		t.Fatalf("stdout does not hold the measured result (%v): %q", err, o.stdout)
	}
	if !strings.Contains(o.stderr, "printed above as JSON") {
		t.Errorf("stderr does not say where the result went:\n%s", o.stderr)
	}
}
