package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/facts"
	"github.com/xbench/xbench/harness/workload"
)

// `xbench workloads` lists every workload with its phases and the flags
// derived from its parameters; the golden file pins the text of each
// workload it holds (-update rewrites it whole). A workload registered after
// the golden was written is checked for its phases line and a flag line per
// parameter instead, so adding a workload needs no edit here
// (docs/adding-a-workload.md).
func TestWorkloadsGolden(t *testing.T) {
	stdout, stderr, code, err := runApp(t, "workloads")
	if code != 0 || err != nil {
		t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
	}
	for _, want := range []string{
		"gemm: ", "ttt: ", "phases: forward, backward, inner_only", "--shapes: ",
		"--m ", "--n ", "--k ", "--batch ", "--layout ", "nn, nt, tn, tt",
		"--model-size ", "--ttt-type ", "--seq-len ", "--mini-batch ", "--dtype ", "--backbone ", "integers 1 to 16777216",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("workloads output lacks %q", want)
		}
	}
	if strings.Index(stdout, "gemm: ") > strings.Index(stdout, "ttt: ") {
		t.Error("workloads not listed in name order")
	}
	if *update {
		golden(t, "workloads.golden", stdout)
	} else {
		goldenSections(t, "workloads.golden", stdout)
	}

	// --json is the facts document the Python backends read, byte for byte
	stdout, stderr, code, err = runApp(t, "workloads", "--json")
	committed, rerr := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(facts.PythonPath)))
	if code != 0 || err != nil || rerr != nil || stdout != string(committed) {
		t.Errorf("workloads --json: exit %d (%v, %v) %s; want the committed %s", code, err, rerr, stderr, facts.PythonPath)
	}

	_, _, code, err = runApp(t, "workloads", "extra")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "no arguments") {
		t.Errorf("workloads extra: exit %d, %v; want 2", code, err)
	}
}

// Bad input to run exits 2 with one line naming the flag, before any
// backend starts.
func TestRunBadInputExit2(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string // each in the error line
	}{
		{"gemm m 0", []string{"--workload", "gemm", "--m", "0"}, []string{"--m", `"0"`, "integers 1 to 1048576"}},
		{"gemm layout", []string{"--workload", "gemm", "--layout", "xy"}, []string{"--layout", `"xy"`, "nn, nt, tn, tt"}},
		{"unknown workload", []string{"--workload", "nope"}, []string{"--workload", `"nope"`, strings.Join(workload.Names(), ", ")}}, // every registered one
		{"attention head_dim 0", []string{"--workload", "attention", "--head-dim", "0"}, []string{"--head-dim", `"0"`, "integers 1 to 256"}},
		{"attention kv_heads", []string{"--workload", "attention", "--heads", "32", "--kv-heads", "6"}, []string{"--heads --kv-heads", `"32 6"`, "kv_heads dividing heads"}},
		{"attention causal cross", []string{"--workload", "attention", "--causal", "true", "--seq-len", "128", "--kv-len", "256"},
			[]string{"--causal --seq-len --kv-len", `"true 128 256"`, "kv_len equal to seq_len"}},
		{"attention dtype", []string{"--workload", "attention", "--dtype", "tf32"}, []string{"--dtype", `"tf32"`, "float32, bfloat16, float16"}},
		{"attention phase", []string{"--workload", "attention", "--phase", "inner_only"}, []string{"--phase", "forward, backward, both"}},
		{"attention shapes", []string{"--workload", "attention", "--shapes", "square"}, []string{"--shapes", "square", "llm, grid"}},
		{"ttt flag on gemm", []string{"--workload", "gemm", "--seq-len", "64"}, []string{"--seq-len"}},
		{"negative timeout", []string{"--timeout", "-5s"}, []string{"--timeout", "-5s", "positive duration"}},
		{"empty backends", []string{"--backends", ""}, []string{"--backends", "empty"}},
		{"log level", []string{"--log-level", "shouty"}, []string{"--log-level", "shouty"}},
		{"plugin path", []string{"--plugin-path", "/nonexistent"}, []string{"--plugin-path", "/nonexistent", "not a folder"}},
		{"results is a file", []string{"--results", file}, []string{"--results", file, "is a file"}},
		{"results empty", []string{"--results", ""}, []string{"--results", "empty"}},
		{"long value cut", []string{"--workload", "gemm", "--layout", strings.Repeat("q", 100_000)}, []string{"--layout", strings.Repeat("q", 80) + "..."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out, errb bytes.Buffer
			app := &App{Stdout: &out, Stderr: &errb}
			args := append([]string{"run", "--device", "cpu", "--results", t.TempDir()}, tt.args...)
			err := app.Run(ctx, args)
			if code := ExitCode(err); code != 2 {
				t.Fatalf("exit %d (%v), want 2\nstdout:\n%s\nstderr:\n%s", code, err, out.String(), errb.String())
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if len(msg) > 600 {
				t.Errorf("error is %d bytes: input echoed whole", len(msg))
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if out.Len() != 0 {
				t.Errorf("bad input wrote to stdout:\n%s", out.String())
			}
		})
	}
}

// Results written by default land in a folder git ignores, so measuring
// never leaves untracked files in the checkout.
func TestDefaultResultsFolderIsIgnored(t *testing.T) {
	raw, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "/"+defaultResults+"/") {
		t.Fatalf(".gitignore does not ignore /%s/:\n%s", defaultResults, raw)
	}
}

// sections splits `xbench workloads` output into its workloads' blocks by
// name, in order.
func sections(text string) (names []string, by map[string]string) {
	by = map[string]string{}
	for _, block := range strings.Split(strings.TrimRight(text, "\n"), "\n\n") {
		name, _, _ := strings.Cut(block, ":")
		names = append(names, name)
		by[name] = block
	}
	return names, by
}

// goldenSections compares each workload's block with the golden file's
// block of that name; the golden's workloads must all be listed, and a
// listed workload the golden lacks must show its phases and every flag.
func goldenSections(t *testing.T, name, got string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	gotNames, gotBy := sections(got)
	wantNames, wantBy := sections(string(raw))
	if !slices.Equal(gotNames, workload.Names()) {
		t.Errorf("workloads listed %v, registered %v", gotNames, workload.Names())
	}
	for _, w := range wantNames {
		if gotBy[w] != wantBy[w] {
			t.Errorf("workload %s differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", w, name, gotBy[w], wantBy[w])
		}
	}
	for _, w := range gotNames {
		if _, ok := wantBy[w]; ok {
			continue
		}
		wl, _ := workload.Lookup(w)
		block := gotBy[w]
		if !strings.Contains(block, "\n  phases: ") {
			t.Errorf("workload %s lists no phases line:\n%s", w, block)
		}
		for _, flag := range workload.FlagNames(wl) {
			if !strings.Contains(block, "\n  "+flag+" ") {
				t.Errorf("workload %s lists no line for flag %s:\n%s", w, flag, block)
			}
		}
	}
}
