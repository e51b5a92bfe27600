package problems

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

// kernelBenchKeys are the fields of one entry of KernelBench's files.
var kernelBenchKeys = []string{"device", "hardware", "max", "mean", "min", "num_trials", "std"}

func TestWriteReadRoundTrip(t *testing.T) {
	b := Baseline{
		"level1": {"1_square_matmul.py": {Mean: 0.1234567890123, Std: 1e-5, Min: 0.12, Max: 0.13, NumTrials: 100, Hardware: "NVIDIA H100 80GB HBM3", Device: "cuda:0"}},
		"level2": {"10_x.py": {Mean: 2, Std: 0, Min: 2, Max: 2, NumTrials: 1, Hardware: "cpu", Device: "cpu"}},
	}
	p := filepath.Join(t.TempDir(), "timing", "h", Files["pytorch"])
	if err := Write(p, b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Errorf("read back %+v, wrote %+v", got, b)
	}
	// The format as KernelBench's scripts read it: level -> file -> exactly these keys.
	raw, _ := os.ReadFile(p)
	var generic map[string]map[string]map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	for lv, probs := range generic {
		for name, e := range probs {
			var keys []string
			for k := range e {
				keys = append(keys, k)
			}
			if !sameSet(keys, kernelBenchKeys) {
				t.Errorf("%s/%s has keys %v, KernelBench's are %v", lv, name, keys, kernelBenchKeys)
			}
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// A file as KernelBench writes it (three significant figures, its own key
// order and indentation) reads as it is.
func TestReadKernelBenchStyle(t *testing.T) {
	text := `{
    "level1": {
        "19_ReLU.py": {"mean": 0.0311, "std": 0.00179, "min": 0.0297, "max": 0.0433,
            "num_trials": 100, "hardware": "NVIDIA H100 80GB HBM3", "device": "cuda:0"}
    },
    "level3": {}
}`
	p := filepath.Join(t.TempDir(), "b.json")
	os.WriteFile(p, []byte(text), 0o644)
	b, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if e := b["level1"]["19_ReLU.py"]; e.Mean != 0.0311 || e.NumTrials != 100 || e.Device != "cuda:0" {
		t.Errorf("read %+v", e)
	}
}

func TestReadRefusals(t *testing.T) {
	tests := []struct{ text, want string }{
		{`[1]`, "not KernelBench's"},
		{`{"lvl1": {}}`, `"lvl1" is not level<N>`},
		{`{"level1": {"1_a.py": {"mean": 2, "std": 0, "min": 3, "max": 4, "num_trials": 1}}}`, "level1/1_a.py: min 3 <= mean 2"},
		{`{"level1": {"1_a.py": {"mean": 1, "std": 0, "min": 1, "max": 1, "num_trials": 0}}}`, "num_trials 0"},
		{`{"level1": {"1_a.py": {"mean": -1, "std": 0, "min": -1, "max": 1, "num_trials": 1}}}`, "not a finite non-negative"},
		{`{"level1": {"1_a.py": {"mean": 1, "std": 0, "min": 1, "max": 1, "num_trials": 1, "precision": "tf32"}}}`, `precision "tf32"`},
		{`{"level1": {"1_a.py": {"mean": 1, "std": 0, "min": 1, "max": 1, "num_trials": 1, "precision": "strict-ieee"},
		  "2_b.py": {"mean": 1, "std": 0, "min": 1, "max": 1, "num_trials": 1}}}`, "two precision conventions in one file"},
	}
	for _, tc := range tests {
		p := filepath.Join(t.TempDir(), "b.json")
		os.WriteFile(p, []byte(tc.text), 0o644)
		if _, err := Read(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("Read(%s) = %v, want an error naming the file and %q", tc.text, err, tc.want)
		}
	}
}

func TestFromResults(t *testing.T) {
	dir := problemSet(t, map[int][]string{1: {"1_a.py", "2_b.py"}})
	ok := res(dir, "pytorch/compile", 1, 1, 3)
	ok.Device = result.Device{Kind: "cuda", Name: "NVIDIA H100 80GB HBM3"}
	failed := res(dir, "pytorch", 1, 2, 0)
	other := res(dir, "candidates", 1, 1, 2) // not a baseline backend
	files, skipped := FromResults([]result.Result{ok, failed, other})
	// the result's own statistics, and how it was timed (warm: its mode has no cold cache)
	want := Entry{Mean: 3, Std: 0.5, Min: 2.5, Max: 4, NumTrials: 10, Hardware: "NVIDIA H100 80GB HBM3", Device: "cuda:0", L2: "warm"}
	if got := files[Files["pytorch/compile"]]["level1"]["1_a.py"]; got != want {
		t.Errorf("entry %+v, want %+v (the result's own statistics and method)", got, want)
	}
	if len(files) != 1 || len(skipped) != 1 || !strings.Contains(skipped[0], "pytorch level1/2: failed") {
		t.Errorf("files %v skipped %v: want one file and the failed cell named", files, skipped)
	}
}

func TestIsRocm(t *testing.T) {
	has := func(paths ...string) func(string) bool {
		return func(p string) bool {
			for _, x := range paths {
				if x == p {
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		device string
		exists func(string) bool
		want   bool
	}{
		{"rocm", has(), true},
		{"cuda", has("/dev/kfd"), false},
		{"auto", has("/dev/kfd"), true},
		{"auto", has("/dev/kfd", "/proc/driver/nvidia/version"), false},
		{"cpu", has("/dev/kfd"), false},
	}
	for _, tc := range tests {
		if got := IsRocm(tc.device, tc.exists); got != tc.want {
			t.Errorf("IsRocm(%s) = %v, want %v", tc.device, got, tc.want)
		}
	}
	env, settings := ApplyRocm()
	if len(env) != 3 || settings["HSA_ENABLE_SDMA"] != "0" || settings["GPU_MAX_HW_QUEUES"] != "1" || settings["RLIMIT_CORE"] != "0" {
		t.Errorf("ApplyRocm = %v %v", env, settings)
	}
}

// The two precision conventions never share a file: kernelbench results go
// to KernelBench's file name with exactly its keys, strict-ieee ones to a
// file of their own whose entries say so; a result from before the param
// was timed strict. Score refuses results of another convention.
func TestConventionsNeverMix(t *testing.T) {
	dir := problemSet(t, map[int][]string{1: {"1_a.py", "2_b.py"}})
	kb := res(dir, "pytorch", 1, 1, 3)
	strict := res(dir, "pytorch", 1, 2, 5)
	strict.Config = strict.Config.With("precision", "strict-ieee")
	old := res(dir, "pytorch", 1, 1, 7)
	delete(old.Config.Params, "precision")
	files, _ := FromResults([]result.Result{kb, strict, old})
	strictName := "baseline_time_torch_strict-ieee.json"
	if len(files) != 2 || len(files[Files["pytorch"]]["level1"]) != 1 || len(files[strictName]["level1"]) != 2 {
		t.Fatalf("files %v: want %s with 1_a and %s with 2_b and the old 1_a", files, Files["pytorch"], strictName)
	}
	if e := files[Files["pytorch"]]["level1"]["1_a.py"]; e.Precision != "" || e.Mean != 3 {
		t.Errorf("kernelbench entry %+v: want KernelBench's keys only", e)
	}
	if e := files[strictName]["level1"]["2_b.py"]; e.Precision != "strict-ieee" {
		t.Errorf("strict entry %+v does not say strict-ieee", e)
	}
	out := t.TempDir()
	paths, err := WriteAll(out, files)
	if err != nil || len(paths) != 2 {
		t.Fatalf("WriteAll: %v %v", paths, err)
	}
	for _, p := range paths {
		b, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		want := "kernelbench"
		if strings.Contains(p, "strict") {
			want = "strict-ieee"
		}
		if b.Convention() != want {
			t.Errorf("%s reads as %s, want %s", p, b.Convention(), want)
		}
		if mixed := CheckPrecision(b, []result.Result{kb, strict}); len(mixed) != 1 || !strings.Contains(mixed[0], "1 results timed under precision") {
			t.Errorf("CheckPrecision against %s = %v, want the one result of the other convention", p, mixed)
		}
	}
}

func TestGfxOverride(t *testing.T) {
	none := func(string) string { return "" }
	node := func(v string) []string {
		return []string{"cpu_cores_count 0\ngfx_target_version " + v + "\nsimd_count 120\n"}
	}
	for _, tc := range []struct {
		name   string
		getenv func(string) string
		props  []string
		want   string
	}{
		{"rx 6700 (gfx1031)", none, node("100301"), "10.3.0"},
		{"rx 6800 (gfx1030, supported)", none, node("100300"), ""},
		{"mi300x (gfx942)", none, node("90402"), ""},
		{"cpu node only", none, node("0"), ""},
		{"no driver", none, nil, ""},
		{"user's value wins", func(k string) string { return map[string]string{"HSA_OVERRIDE_GFX_VERSION": "10.3.1"}[k] }, node("100302"), "10.3.1"},
	} {
		if got := GfxOverride(tc.getenv, tc.props); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
