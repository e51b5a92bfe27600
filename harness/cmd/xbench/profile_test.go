package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestProfileEveryBackendOnCPU runs xbench profile through every real
// backend (as plugin processes, the Python ones behind the JSON-lines
// contract; triton in its interpreter) plus one that has no profiler.
func TestProfileEveryBackendOnCPU(t *testing.T) {
	backends := []string{"burnstyle-hip", "pytorch", "pytorch/compile", "jax", "triton"}
	traces := filepath.Join(t.TempDir(), "traces")
	example := throwaway(t, nil)
	o := xb(t, nil, "profile", "--plugin-path", example, "--backends", strings.Join(append(backends, "example"), ","),
		"--device", "cpu", "--model-size", "tiny", "--seq-len", "16", "--warmup", "1", "--calls", "2", "--top", "5",
		"--trace-dir", traces)
	if o.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
	}
	top := regexp.MustCompile(`top (\d+) of (\d+) kernels`)
	sections := strings.Split(o.stdout, "\n\n")
	for _, name := range backends {
		var sec string
		for _, s := range sections {
			if strings.HasPrefix(s, name+" on cpu") {
				sec = s
			}
		}
		if sec == "" {
			t.Errorf("%s: no section in the output:\n%s", name, o.stdout)
			continue
		}
		if !strings.Contains(sec, "not a timing: use xbench run for timings") || !strings.Contains(sec, "share by category") {
			t.Errorf("%s: section lacks the label or the categories:\n%s", name, sec)
		}
		if m := top.FindStringSubmatch(sec); m == nil || m[1] == "0" {
			t.Errorf("%s: no kernel rows:\n%s", name, sec)
		}
		path := filepath.Join(traces, strings.ReplaceAll(name, "/", "_")+".json")
		raw, err := os.ReadFile(path)
		var trace struct {
			TraceEvents []json.RawMessage `json:"traceEvents"`
		}
		if err != nil || json.Unmarshal(raw, &trace) != nil || len(trace.TraceEvents) == 0 {
			t.Errorf("%s: trace %s is not trace-event JSON with events (%v)", name, path, err)
		}
		if !strings.Contains(sec, "Chrome trace: "+path) {
			t.Errorf("%s: the output does not say where the trace went:\n%s", name, sec)
		}
	}
	if !strings.Contains(o.stdout, "example cannot profile: ") {
		t.Errorf("the backend without a profiler is not named in one line:\n%s", o.stdout)
	}
}

func TestProfileBadFlagsExit2(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--calls", "0"}, "--calls 0"},
		{[]string{"--top", "-1"}, "--top -1"},
		{[]string{"--device", "tpu"}, `--device "tpu"`},
		{[]string{"--workload", "gemm", "--shapes", "square"}, "--shapes"},
		{[]string{"--trace-dir", "/proc/xbench-no"}, "--trace-dir"},
	} {
		o := xb(t, nil, append([]string{"profile", "--backends", "burnstyle-hip"}, tt.args...)...)
		if o.code != 2 || !strings.Contains(o.stderr, tt.want) || !strings.Contains(o.stderr, "allowed") && !strings.Contains(o.stderr, "cannot be created") {
			t.Errorf("profile %v: exit %d, stderr %q; want exit 2 naming %q", tt.args, o.code, o.stderr, tt.want)
		}
	}
}
