package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
)

var tinyRun = []string{"--device", "cpu", "--model-size", "tiny", "--seq-len", "64", "--warmup", "1", "--repeats", "3"}

func TestRunNativeAndPyTorchJSON(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"run", "--backends", "burnstyle-hip,pytorch", "--json", "--results", dir}, tinyRun...)
	o := xb(t, nil, args...)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	rs := jsonResults(t, o.stdout)
	if len(rs) != 2 {
		t.Fatalf("want 2 results, got %d", len(rs))
	}
	for _, r := range rs {
		if r.Status != result.StatusOK || len(r.SamplesMs) != 3 || r.Stats == nil || r.RunID != rs[0].RunID || r.Device.Kind != "cpu" {
			t.Errorf("%s: status %s, %d samples, stats %v, run id %q", r.Backend, r.Status, len(r.SamplesMs), r.Stats, r.RunID)
		}
	}
	onDisk, skipped, err := store.ReadAll(dir)
	if err != nil || len(onDisk) != 2 || len(skipped) != 0 {
		t.Fatalf("results folder holds %d results, skipped %v (%v)", len(onDisk), skipped, err)
	}
}

func TestRunTable(t *testing.T) {
	o := xb(t, nil, append([]string{"run", "--backends", "burnstyle-hip", "--results", t.TempDir()}, tinyRun...)...)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	for _, w := range []string{"backend", "median ms", "95% CI ms", "burnstyle-hip", "1.00x", "ok"} {
		if !strings.Contains(o.stdout, w) {
			t.Errorf("table lacks %q:\n%s", w, o.stdout)
		}
	}
	if strings.Contains(o.stdout, "speed-up") {
		t.Errorf("one backend has no speed-up table:\n%s", o.stdout)
	}
}

// TestRunWinnerTable: two backends end with the winner of the
// configuration and its speed-up with an interval, over pytorch (the one
// default baseline rule, as report's: pytorch if run, else the first by
// name), and the table says "vs burnstyle-hip".
func TestRunWinnerTable(t *testing.T) {
	// faulty (a stdlib-only test backend) answers seq_len 16 with an ok
	// timing and starts in a moment, unlike pytorch.
	args := []string{"run", "--backends", "burnstyle-hip,faulty", "--plugin-path", filepath.Join("harness", "testdata", "faultbackend"),
		"--results", t.TempDir(), "--device", "cpu", "--model-size", "tiny", "--seq-len", "16", "--warmup", "1", "--repeats", "6"}
	o := xb(t, nil, args...)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	for _, w := range []string{"vs burnstyle-hip", "winner", "speed-up", "95% CI", "Hodges-Lehmann"} {
		if !strings.Contains(o.stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, o.stdout)
		}
	}
}

// TestThrowawayBackend: the documented example backend, copied anywhere, is
// listed beside a built-in one (a go-plugin with variants: one row each)
// and runs. The listing names only those two, so no framework is imported
// for it; every real backend's Info is asked by verify in CI.
func TestThrowawayBackend(t *testing.T) {
	dir := throwaway(t, nil)
	o := xb(t, nil, "backends", "--plugin-path", dir, "--backends", "example,burnstyle-hip")
	for _, w := range []string{"\nexample ", "\nburnstyle-hip ", "\nburnstyle-hip/cublaslt "} {
		if o.code != 0 || !strings.Contains(o.stdout, w) || strings.Contains(o.stdout, "\npytorch ") {
			t.Fatalf("backends: exit %d, want rows of example and burnstyle-hip (and its variant) alone, stdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
		}
	}
	o = xb(t, nil, append([]string{"run", "--plugin-path", dir, "--backends", "example", "--json", "--results", t.TempDir()}, tinyRun...)...)
	rs := jsonResults(t, o.stdout)
	if o.code != 0 || len(rs) != 1 || rs[0].Status != result.StatusOK || rs[0].Backend != "example" {
		t.Fatalf("run: exit %d, results %+v\n%s", o.code, rs, o.stderr)
	}
	// gemm with its defaults is timed cold (a ColdCacher): the example
	// flushes and echoes the mode, so the doc's backend passes as written.
	o = xb(t, nil, "run", "--plugin-path", dir, "--backends", "example", "--json", "--results", t.TempDir(),
		"--workload", "gemm", "--device", "cpu", "--m", "32", "--n", "32", "--k", "32", "--warmup", "0", "--repeats", "2")
	rs = jsonResults(t, o.stdout)
	if o.code != 0 || len(rs) != 1 || rs[0].Status != result.StatusOK || !rs[0].Mode.ColdCache {
		t.Fatalf("gemm by default: exit %d, results %+v\n%s", o.code, rs, o.stderr)
	}
	// A configuration outside its capabilities is answered, not crashed on.
	o = xb(t, nil, append([]string{"run", "--plugin-path", dir, "--backends", "example", "--json", "--results", t.TempDir(), "--ttt-type", "mlp"}, tinyRun...)...)
	rs = jsonResults(t, o.stdout)
	if o.code != 0 || len(rs) != 1 || rs[0].Status != result.StatusUnsupported || !strings.Contains(rs[0].Message, "ttt_type mlp") {
		t.Fatalf("unsupported: exit %d, results %+v\n%s", o.code, rs, o.stderr)
	}
}

// A backend whose capabilities hold a workload its plugin.json does not
// list is started for it only when named: `xbench backends` says so on the
// workload's row (the step a newcomer adding a workload misses).
func TestBackendsFlagsAWorkloadMissingFromPluginJSON(t *testing.T) {
	dir := throwaway(t, func(m map[string]any) { m["workloads"] = []string{"ttt"} })
	o := xb(t, nil, "backends", "--plugin-path", dir, "--backends", "example")
	var ttt, gemm string
	for _, line := range strings.Split(o.stdout, "\n") {
		switch {
		case strings.HasPrefix(line, "example ") && strings.Contains(line, " ttt "):
			ttt = line
		case strings.HasPrefix(line, "example ") && strings.Contains(line, " gemm "):
			gemm = line
		}
	}
	if o.code != 0 || !strings.HasSuffix(strings.TrimSpace(ttt), " ok") || !strings.Contains(gemm, `plugin.json "workloads" lacks gemm`) {
		t.Fatalf("exit %d, want ttt ok and gemm flagged:\n%s\n%s", o.code, o.stdout, o.stderr)
	}
}

func TestEnvNixRunsThroughDevelop(t *testing.T) {
	dir := throwaway(t, func(m map[string]any) { m["shell"] = "bench-pytorch" })
	log := filepath.Join(t.TempDir(), "nix.log")
	path := filepath.Join(root, "harness/runner/testdata/fake-nix") + string(os.PathListSeparator) + os.Getenv("PATH")
	o := xb(t, []string{"PATH=" + path, "FAKE_NIX_LOG=" + log}, append([]string{"run", "--env", "nix", "--plugin-path", dir, "--backends", "example", "--json", "--results", t.TempDir()}, tinyRun...)...)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the stand-in nix was not called: %v", err)
	}
	if want := "develop " + root + "#bench-pytorch --command python3 "; !strings.Contains(string(raw), want) {
		t.Errorf("nix called as %q, want it to contain %q", raw, want)
	}
	rs := jsonResults(t, o.stdout)
	if len(rs) != 1 || rs[0].Status != result.StatusOK || rs[0].Env.Runner != "nix" {
		t.Errorf("results %+v", rs)
	}
}

// TestVerifyNativeAndPyTorch verifies both TTT types in one invocation of a
// --plan: each configuration gets its own table, record and --dump folder,
// while each backend process starts once and serves both. A plain verify
// of one line prints what the plan printed for it.
func TestVerifyNativeAndPyTorch(t *testing.T) {
	types := []string{"linear", "mlp"}
	dumps := map[string]string{}
	var plan strings.Builder
	plan.WriteString("# two TTT types\n\n")
	for _, tt := range types {
		dumps[tt] = t.TempDir()
		plan.WriteString("--ttt-type " + tt + " --dump " + dumps[tt] + "  # the " + tt + " inner model\n")
	}
	planFile := filepath.Join(t.TempDir(), "tiny.plan")
	if err := os.WriteFile(planFile, []byte(plan.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	o := xb(t, nil, "verify", "--plan", planFile, "--backends", "burnstyle-hip,pytorch", "--device", "cpu", "--model-size", "tiny", "--results", results)
	tables := strings.Split(o.stdout, "\n\n")
	if o.code != 0 || len(tables) != 2 {
		t.Fatalf("exit %d, %d tables, want 0 and 2\nstdout:\n%s\nstderr:\n%s", o.code, len(tables), o.stdout, o.stderr)
	}
	for i, tt := range types {
		if !strings.Contains(tables[i], "verify ttt tiny "+tt+" ") || strings.Count(tables[i], " pass") != 2 {
			t.Errorf("table %d is not %s with two passes:\n%s", i, tt, tables[i])
		}
		for _, f := range []string{"weights.safetensors", "inputs.safetensors", "reference-float64.safetensors", "pytorch.safetensors", "burnstyle-hip.safetensors"} {
			if _, err := os.Stat(filepath.Join(dumps[tt], f)); err != nil {
				t.Errorf("%s: --dump lacks %s", tt, f)
			}
		}
	}
	for _, name := range []string{"pytorch", "burnstyle-hip"} {
		if n := strings.Count(o.stderr, "started "+name+" in "); n != 1 {
			t.Errorf("%s started %d times, want once for the whole plan:\n%s", name, n, o.stderr)
		}
	}
	if recs, _ := filepath.Glob(filepath.Join(results, "*", "_verify_*.json")); len(recs) != 2 {
		t.Errorf("%d verify records, want one per configuration: %v", len(recs), recs)
	}
	// The plain command on the plan's first line: the same table (the
	// native backend is deterministic on the CPU, so its numbers are too).
	one := xb(t, nil, "verify", "--backends", "burnstyle-hip", "--device", "cpu", "--model-size", "tiny", "--ttt-type", "linear", "--results", results)
	var want []string
	for _, l := range strings.Split(tables[0], "\n") {
		if !strings.HasPrefix(l, "pytorch ") {
			want = append(want, l)
		}
	}
	if one.code != 0 || strings.TrimSpace(one.stdout) != strings.TrimSpace(strings.Join(want, "\n")) {
		t.Errorf("plain verify: exit %d, printed\n%s\nwant the plan's table\n%s\nstderr:\n%s", one.code, one.stdout, strings.Join(want, "\n"), one.stderr)
	}
}

// A backend that hangs before it can answer (a framework import that never
// returns) is bounded by --timeout like any cell, or by --start-timeout
// when that is given (then --timeout is the configuration's alone), and
// killed; the result names the bound it exceeded.
func TestHangAtStartIsATimeout(t *testing.T) {
	for _, bound := range [][]string{{"--timeout", "3s"}, {"--timeout", "1h", "--start-timeout", "3s"}} {
		dir := throwaway(t, nil)
		script := filepath.Join(dir, "example", "backend.py")
		raw, _ := os.ReadFile(script)
		pidFile := filepath.Join(t.TempDir(), "pid")
		hang := "import os, time\nopen(" + strconvQuote(pidFile) + ", 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
		if err := os.WriteFile(script, append([]byte(hang), raw...), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"run", "--plugin-path", dir, "--backends", "example", "--json", "--results", t.TempDir()}, bound...)
		o := xb(t, nil, append(args, tinyRun...)...)
		rs := jsonResults(t, o.stdout)
		named := bound[len(bound)-2] + " 3s"
		if len(rs) != 1 || rs[0].Status != result.StatusTimeout || !strings.Contains(rs[0].Message, named) {
			t.Fatalf("%v: want one timeout result naming %s, got exit %d %+v\n%s", bound, named, o.code, rs, o.stderr)
		}
		pid, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatalf("%v: the hanging backend never started: %v", bound, err)
		}
		if alive(strings.TrimSpace(string(pid))) {
			t.Errorf("%v: hung backend %s survived its timeout", bound, pid)
		}
	}
}

// Listing backends starts each one to ask what it supports; a backend that
// hangs while starting is bounded by --timeout there too, and named. Only
// the backend --backends names is listed (and started).
func TestBackendsListingBoundsAHangingStart(t *testing.T) {
	dir := throwaway(t, nil)
	script := filepath.Join(dir, "example", "backend.py")
	raw, _ := os.ReadFile(script)
	hang := "import time\ntime.sleep(600)\n"
	if err := os.WriteFile(script, append([]byte(hang), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	o := xb(t, nil, "backends", "--plugin-path", dir, "--backends", "example", "--timeout", "3s")
	var line string
	for _, l := range strings.Split(strings.TrimSpace(o.stdout), "\n")[1:] {
		if strings.HasPrefix(l, "example") {
			line = l
		} else {
			t.Errorf("a backend --backends did not name is listed: %q", l)
		}
	}
	if !strings.Contains(line, "did not start within --timeout 3s") {
		t.Fatalf("example backend's row %q does not name the bound; exit %d\n%s\n%s", line, o.code, o.stdout, o.stderr)
	}
}

// A run whose only result is oom exits 1 (the result is still written), and
// --help says which statuses do that. The built-in backend answers a GEMM
// of three 2^17 x 2^17 matrices (192 GiB) oom from its estimate, allocating nothing.
func TestRunExits1OnOOM(t *testing.T) {
	dir := t.TempDir()
	o := xb(t, nil, "run", "--workload", "gemm", "--backends", "burnstyle-hip", "--device", "cpu", "--results", dir,
		"--m", "131072", "--n", "131072", "--k", "131072", "--warmup", "0", "--repeats", "2")
	if o.code != 1 || !strings.Contains(o.stderr, "1 of 1 results ended failed, timeout or oom: burnstyle-hip (oom)") {
		t.Fatalf("exit %d, want 1 naming the oom result\n%s", o.code, o.stderr)
	}
	if rs, _, err := store.ReadAll(dir); err != nil || len(rs) != 1 || rs[0].Status != result.StatusOOM {
		t.Fatalf("the oom result was not written: %+v %v", rs, err)
	}
	o = xb(t, nil, "run", "--help")
	if o.code != 0 || !strings.Contains(o.stdout, "1 when any ends failed,\ntimeout or oom") {
		t.Errorf("run --help does not give the exit statuses:\n%s", o.stdout)
	}
}
