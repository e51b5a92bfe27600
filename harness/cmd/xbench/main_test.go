package main

// End-to-end tests of the real binary: built once, run as a user would, with
// backends as real plugin processes over gRPC.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/internal/testbin"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

var (
	update = flag.Bool("update", false, "rewrite golden files")
	xbench string // path of the built binary
	root   string // repository root
)

func TestMain(m *testing.M) {
	flag.Parse()
	_, file, _, _ := runtime.Caller(0)
	root = filepath.Clean(filepath.Join(filepath.Dir(file), "../../.."))
	dir, err := os.MkdirTemp("", "xbench-e2e-*")
	if err != nil {
		panic(err)
	}
	if xbench, err = testbin.Build(root, dir); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type outcome struct {
	stdout, stderr string
	code           int
}

func xb(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(xbench, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run xbench %v: %v", args, err)
	}
	return outcome{out.String(), errb.String(), code}
}

// throwaway makes a backend folder from the documented example's manifest
// and script alone, optionally rewriting its manifest.
func throwaway(t *testing.T, edit func(m map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	dst := filepath.Join(dir, "example")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plugin.json", "backend.py"} {
		raw, err := os.ReadFile(filepath.Join(root, "docs/example-backend", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "plugin.json" && edit != nil {
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			edit(m)
			raw, _ = json.Marshal(m)
		}
		if err := os.WriteFile(filepath.Join(dst, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// jsonResults checks every stdout line is a schema-valid result.
func jsonResults(t *testing.T, stdout string) []result.Result {
	t.Helper()
	var out []result.Result
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if err := result.Validate(line); err != nil {
			t.Fatalf("stdout line is not a valid result: %v\n%s", err, line)
		}
		var r result.Result
		_ = json.Unmarshal(line, &r)
		out = append(out, r)
	}
	return out
}

func TestBadInputsExit2(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // each must appear in stderr
	}{
		{"seq-len not multiple", []string{"run", "--seq-len", "100"}, []string{"--seq-len 100", "--mini-batch 16", "multiples of 16"}},
		{"unknown size", []string{"run", "--model-size", "7b"}, []string{"--model-size", "7b", "tiny, 125m"}},
		{"unknown dtype", []string{"run", "--dtype", "int4"}, []string{"--dtype", "int4", "float32"}},
		{"unknown backend", []string{"run", "--backends", "nosuch", "--model-size", "tiny"}, []string{"--backends", "nosuch", "burnstyle-hip"}},
		{"repeats below 1", []string{"run", "--repeats", "0"}, []string{"--repeats", `"0"`, "integers 1 to"}},
		{"unknown device", []string{"run", "--device", "tpu"}, []string{"--device", "tpu", "cuda"}},
		{"device index empty", []string{"run", "--device", "cuda:"}, []string{"--device", `"cuda:"`, "cuda:N"}},
		{"device index negative", []string{"run", "--device", "cuda:-1"}, []string{"--device", `"cuda:-1"`, "cuda:N"}},
		{"device index not a number", []string{"verify", "--device", "cuda:x"}, []string{"--device", `"cuda:x"`, "cuda:N"}},
		{"device index too large", []string{"run", "--device", "rocm:1024"}, []string{"--device", `"rocm:1024"`, "0 to 1023"}},
		{"cpu has no index", []string{"calibrate", "--device", "cpu:0"}, []string{"--device", `"cpu:0"`, "cuda:N"}},
		{"device pins two GPUs", []string{"sweep", "--device", "cuda:0,cuda:1", "--results", "results/local/sweep-bad"}, []string{"--device", "cuda:0,cuda:1", "--gpus"}},
		{"device and gpus", []string{"sweep", "--device", "cuda:1", "--gpus", "0,1", "--results", "results/local/sweep-bad"}, []string{"--device", "--gpus", "one of them"}},
		{"device and slurm", []string{"sweep", "--device", "cuda:1", "--slurm", "--results", "results/local/sweep-bad"}, []string{"--device", "--slurm", "gres"}},
		{"problems device", []string{"problems", "baseline", "--hardware", "H100", "--device", "cuda:x", "--results", "results/local/problems-bad"}, []string{"--device", `"cuda:x"`, "cuda:N"}},
		{"unknown env", []string{"run", "--env", "docker"}, []string{"--env", "docker", "nix"}},
		{"unknown flag", []string{"run", "--bogus"}, []string{"bogus"}},
		{"unknown command", []string{"frobnicate"}, []string{"frobnicate", "run"}},
		{"gemm m 0", []string{"run", "--workload", "gemm", "--m", "0"}, []string{"--m", `"0"`, "integers 1 to"}},
		{"gemm layout", []string{"run", "--workload", "gemm", "--layout", "xy"}, []string{"--layout", `"xy"`, "nn, nt, tn, tt"}},
		{"unknown workload", []string{"run", "--workload", "nope"}, []string{"--workload", `"nope"`, strings.Join(workload.Names(), ", ")}}, // every registered one
		{"negative timeout", []string{"run", "--timeout", "-5s"}, []string{"--timeout", "-5s"}},
		{"empty backends", []string{"run", "--backends", ""}, []string{"--backends", "empty"}},
		{"log level", []string{"run", "--log-level", "shouty"}, []string{"--log-level", "shouty"}},
		{"plugin path", []string{"run", "--plugin-path", "/nonexistent"}, []string{"--plugin-path", "/nonexistent"}},
		{"results is a file", []string{"run", "--results", "go.mod"}, []string{"--results", "go.mod", "is a file"}},
		{"unknown variant", []string{"run", "--backends", "burnstyle-hip/novariant", "--model-size", "tiny", "--results", "results/local"}, []string{"--backends", "novariant", "burnstyle-hip"}},
		{"gpus not ids", []string{"sweep", "--gpus", "a,b", "--results", "results/local/sweep-bad"}, []string{"--gpus", `"a"`, "GPU-"}},
		{"max reply", []string{"run", "--max-reply", "10"}, []string{"--max-reply", "10", "1024"}},
		{"backends lists an unknown backend", []string{"backends", "--backends", "pytorch,nosuch"}, []string{"--backends", `"nosuch"`, "pytorch"}},
		{"plan missing", []string{"verify", "--plan", "harness/cmd/xbench/testdata/no_such.plan"}, []string{"--plan", "no_such.plan", "cannot be read"}},
		{"plan session flag in a line", []string{"verify", "--plan", "harness/cmd/xbench/testdata/plan_session_flag.plan"}, []string{"line 2", "--results", "command line"}},
		{"plan bad value", []string{"verify", "--plan", "harness/cmd/xbench/testdata/plan_bad_value.plan", "--device", "cpu"}, []string{"line 2", "--dtype", `"float3"`, "float32"}},
		{"plan empty", []string{"verify", "--plan", "harness/cmd/xbench/testdata/plan_empty.plan"}, []string{"--plan", "no configuration"}},
	}
	var golden strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := xb(t, nil, tt.args...)
			if o.code != 2 {
				t.Fatalf("exit code %d, want 2; stderr:\n%s", o.code, o.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(o.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, o.stderr)
				}
			}
			// One error line; a backend's start-up progress line may precede it.
			var errLines []string
			for _, l := range strings.Split(strings.TrimRight(o.stderr, "\n"), "\n") {
				if !strings.HasPrefix(l, "started ") {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 {
				t.Errorf("stderr has %d error lines, want one:\n%s", len(errLines), o.stderr)
			}
			if strings.Contains(o.stderr, "goroutine ") || strings.Contains(o.stderr, "panic") {
				t.Errorf("stack trace in stderr:\n%s", o.stderr)
			}
			if !strings.Contains(tt.name, "unknown backend") { // its list grows with every backend added
				golden.WriteString("$ xbench " + strings.Join(tt.args, " ") + "\n" + strings.Join(errLines, "\n") + "\n")
			}
		})
	}
	checkGolden(t, "testdata/bad_inputs.golden", golden.String())
}

func TestMissingPythonPackageExit2(t *testing.T) {
	dir := throwaway(t, func(m map[string]any) { m["requires"] = []string{"no_such_module_xbench"} })
	o := xb(t, nil, "run", "--env", "venv", "--plugin-path", dir, "--backends", "example", "--model-size", "tiny", "--seq-len", "64")
	if o.code != 2 || !strings.Contains(o.stderr, "no_such_module_xbench") || !strings.Contains(o.stderr, "setup.sh") {
		t.Fatalf("code %d, stderr:\n%s", o.code, o.stderr)
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s (run go test -update): %v", path, err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (run go test -update if intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
