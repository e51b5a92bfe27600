package sweep_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

// slowJITDir holds a backend with a 0.3 s compile kept in a persistent
// cache (harness/testdata/slowjit/slowjit/slowjit.py).
var slowJITDir = filepath.Join(repoRoot, "harness", "testdata", "slowjit")

type span struct {
	op, key, pid string
	t0, t1       float64
}

func readSpans(t *testing.T, path string) []span {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		t0, _ := strconv.ParseFloat(p[3], 64)
		t1, _ := strconv.ParseFloat(p[4], 64)
		out = append(out, span{p[0], p[1], p[2], t0, t1})
	}
	return out
}

// The compile-ahead pipeline through real processes and the real protocol:
// helpers compile each cell once into the cache, the timing process finds
// it there (its own first call is a cache hit) and the result keeps the
// helper's compile time; no cell is timed while a compile runs; a compiler
// crash and an out-of-memory compile are their own cells' results, not
// timed, and the out-of-memory one is classified oom.
func TestCompileAheadThroughRealProcesses(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	logPath := filepath.Join(t.TempDir(), "spans")
	o := runXbench(t, []string{"XBENCH_SLOWJIT_LOG=" + logPath}, "sweep", "--env", "venv", "--plugin-path", slowJITDir,
		"--backends", "slowjit", "--device", "cpu", "--model-size", "tiny", "--ttt-type", "linear", "--dtype", "float32",
		"--seq-len", "16,32,48,64,80", "--warmup", "0", "--repeats", "3",
		"--compile-ahead", "2", "--compile-cache", cache, "--cells-per-call", "4", "--results", dir)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	if !strings.Contains(o.stderr, "sweep: compiled 5 cells ahead in") || !strings.Contains(o.stderr, "2 failed") {
		t.Errorf("no compile line for the window in:\n%s", o.stderr)
	}
	// slowjit has no run_batch: its "unknown op" reaches the sweep as
	// backend.ErrCannotBatch through the plugin, and its cells go one by one.
	if !strings.Contains(o.stderr, "sweep: slowjit cannot take a batch") {
		t.Errorf("no line saying slowjit takes no batch in:\n%s", o.stderr)
	}
	took := regexp.MustCompile(`then took ([0-9.]+) ms`)
	for seq, want := range map[int]result.Status{16: result.StatusOK, 32: result.StatusFailed, 48: result.StatusOK,
		64: result.StatusOK, 80: result.StatusOOM} {
		name := "slowjit__ttt_forward_tiny_linear_1_" + strconv.Itoa(seq) + "_16_float32_transformer__cpu.json"
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var r result.Result
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != want {
			t.Errorf("seq %d: status %s (%s), want %s", seq, r.Status, r.Message, want)
			continue
		}
		switch want {
		case result.StatusOK:
			m := took.FindStringSubmatch(r.Env.Settings["compile_ahead"])
			if r.CompileMs < 250 || m == nil {
				t.Errorf("seq %d: compile_ms %g (want the helper's ~300 ms), settings %v", seq, r.CompileMs, r.Env.Settings)
			} else if own, _ := strconv.ParseFloat(m[1], 64); own > 100 {
				t.Errorf("seq %d: the timing process took %g ms: it compiled again instead of reading the cache", seq, own)
			}
		default:
			if !strings.HasPrefix(r.Message, "compile ahead: ") {
				t.Errorf("seq %d: message %q does not say the compile failed", seq, r.Message)
			}
		}
	}
	spans := readSpans(t, logPath)
	compiles, runs := map[string]int{}, map[string]int{}
	for _, s := range spans {
		if s.op == "compile" {
			compiles[s.key]++
		} else {
			runs[s.key]++
		}
	}
	for _, seq := range []string{"16", "48", "64"} {
		key := "tiny-" + seq + "-float32"
		if compiles[key] != 1 || runs[key] != 1 {
			t.Errorf("%s: compiled %d and run %d times, want once each", key, compiles[key], runs[key])
		}
	}
	if runs["tiny-32-float32"]+runs["tiny-80-float32"] != 0 {
		t.Errorf("cells whose compile failed were timed: %v", runs)
	}
	for _, r := range spans {
		for _, c := range spans {
			if r.op == "run" && c.op == "compile" && r.t0 < c.t1 && c.t0 < r.t1 {
				t.Errorf("%s was timed (%.3f-%.3f) while %s compiled (%.3f-%.3f)", r.key, r.t0, r.t1, c.key, c.t0, c.t1)
			}
		}
	}
}
