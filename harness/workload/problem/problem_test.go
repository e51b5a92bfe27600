package problem

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// set makes a problem folder with the given files under level1/.
func set(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "level1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, "level1", n), []byte("# problem\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestIDOf(t *testing.T) {
	tests := []struct {
		name string
		id   int
		ok   bool
	}{
		{"12_conv_relu.py", 12, true},
		{"1_a.py", 1, true},
		{"0_zero.py", 0, false},
		{"01_lead.py", 0, false},
		{"x_conv.py", 0, false},
		{"12conv.py", 0, false},
		{"12_conv.txt", 0, false},
		{"1000001_big.py", 0, false},
	}
	for _, tc := range tests {
		id, ok := IDOf(tc.name)
		if id != tc.id || ok != tc.ok {
			t.Errorf("IDOf(%q) = %d %v, want %d %v", tc.name, id, ok, tc.id, tc.ok)
		}
	}
}

func TestListSortsByIDAndRefusesDuplicates(t *testing.T) {
	dir := set(t, "10_b.py", "2_a.py", "README.md", "3_c.py")
	files, err := List(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Name)
	}
	if strings.Join(got, ",") != "2_a.py,3_c.py,10_b.py" {
		t.Errorf("List = %v, want 2, 3, 10 in id order without README.md", got)
	}
	dup := set(t, "2_a.py", "2_b.py")
	if _, err := List(dup, 1); err == nil || !strings.Contains(err.Error(), "2_a.py and 2_b.py") {
		t.Errorf("two files with id 2: error %v does not name both", err)
	}
	if _, err := List(dir, 7); err == nil || !strings.Contains(err.Error(), "level 7") {
		t.Errorf("missing level: error %v does not name it", err)
	}
}

func TestExpand(t *testing.T) {
	dir := set(t, "1_a.py", "2_b.py", "5_c.py")
	w := Workload{}
	base := map[string]string{"problems": dir, "level": "1", "problem": "0", "dtype": "float32"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	ids := func(sets []map[string]string) string {
		var out []string
		for _, s := range sets {
			out = append(out, s["problem"])
		}
		return strings.Join(out, ",")
	}
	all, err := w.Expand(base, 0)
	if err != nil || ids(all) != "1,2,5" {
		t.Fatalf("Expand(problem 0) = %v %v, want ids 1,2,5", ids(all), err)
	}
	if two, _ := w.Expand(base, 2); ids(two) != "1,2" {
		t.Errorf("Expand with limit 2 = %s, want 1,2", ids(two))
	}
	one, err := w.Expand(with("problem", "5"), 1)
	if err != nil || ids(one) != "5" {
		t.Errorf("Expand(problem 5) = %s %v", ids(one), err)
	}
	for _, s := range all {
		cfg, err := workload.Resolve(w, "", s, 3, 10)
		if err != nil {
			t.Fatalf("Resolve(%v): %v", s, err)
		}
		if !filepath.IsAbs(cfg.Get("problems")) {
			t.Errorf("problems %q is not absolute", cfg.Get("problems"))
		}
	}
	if l := w.Label(mustResolve(t, one[0])); l != "level1/5_c.py" {
		t.Errorf("Label = %q, want level1/5_c.py", l)
	}
	bad := []struct {
		set  map[string]string
		want []string
	}{
		{with("problem", "3"), []string{"--problem", `"3"`, "ids of"}},
		{with("problem", "-1"), []string{"--problem", `"-1"`, "0 to 1000000"}},
		{with("level", "2"), []string{"--problems --level", "level2"}},
		{with("level", "x"), []string{"--level", `"x"`}},
	}
	for _, tc := range bad {
		_, err := w.Expand(tc.set, 0)
		var ve *workload.ValueError
		if !errors.As(err, &ve) {
			t.Errorf("Expand(%v) = %v, want a ValueError (exit 2)", tc.set, err)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Expand(%v) error %q lacks %q", tc.set, err, s)
			}
		}
	}
}

func mustResolve(t *testing.T, set map[string]string) result.Config {
	t.Helper()
	c, err := workload.Resolve(Workload{}, "", set, 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolveRefusals(t *testing.T) {
	dir := set(t, "1_a.py")
	tests := []struct {
		set  map[string]string
		want []string
	}{
		// Problem 0 never reaches a configuration: Expand replaces it.
		{map[string]string{"problems": dir, "problem": "0"}, []string{"--problem", `"0"`}},
		{map[string]string{"problems": "rel/path", "problem": "1"}, []string{"--problems", "absolute"}},
		{map[string]string{"problems": strings.Repeat("d", MaxDirLen+1), "problem": "1"}, []string{"--problems", "at most 128 bytes", "..."}},
		{map[string]string{"problems": "a\nb", "problem": "1"}, []string{"--problems", "control characters"}},
		{map[string]string{"problems": dir, "problem": "1", "dtype": "bfloat16"}, []string{"--dtype", "float32"}},
	}
	for _, tc := range tests {
		_, err := workload.Resolve(Workload{}, "", tc.set, 3, 10)
		if err == nil || !workload.IsInputError(err) {
			t.Errorf("Resolve(%v) = %v, want an input error", tc.set, err)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Resolve(%v) error %q lacks %q", tc.set, err, s)
			}
		}
	}
}

func TestCostThroughputRankFixtures(t *testing.T) {
	w := Workload{}
	cfg := mustResolve(t, map[string]string{"problems": set(t, "3_a.py"), "level": "1", "problem": "3"})
	if c, err := w.Cost(cfg); err != nil || c.FLOPs != 0 || c.Bytes != 0 {
		t.Errorf("Cost = %+v %v, want zero: the cost of arbitrary PyTorch is unknown", c, err)
	}
	if tp := w.Throughput(cfg, 4); tp.Value != 250 || tp.Unit != "calls/s" {
		t.Errorf("Throughput at 4 ms = %+v, want 250 calls/s", tp)
	}
	if tp := w.Throughput(cfg, 0); tp.Value != 0 {
		t.Errorf("Throughput at 0 ms = %v, want 0", tp.Value)
	}
	if a, b := w.Rank(cfg.With("level", "1").With("problem", "99")), w.Rank(cfg.With("level", "2").With("problem", "1")); a >= b {
		t.Errorf("Rank: level 1 problem 99 (%g) must come before level 2 problem 1 (%g)", a, b)
	}
	fx, err := w.Fixtures(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := fx.Inputs["seed"].Int32s()
	if err != nil || len(seed) != 1 || seed[0] != 7 || len(fx.Weights) != 0 {
		t.Errorf("Fixtures(seed 7) = %v %v, want one input seed = 7 and no weights", seed, err)
	}
	if w.ReferenceBackend() != "pytorch" || w.Output(cfg) != "out" || w.Tolerance(cfg) != TolTF32 {
		t.Errorf("verification rule changed: reference %q, output %q, tolerance %g", w.ReferenceBackend(), w.Output(cfg), w.Tolerance(cfg))
	}
	// The default convention is KernelBench's; strict-ieee keeps the tight
	// tolerance; a result from before the param was timed strict.
	if cfg.Get("precision") != PrecisionKernelBench || PrecisionOf(cfg) != PrecisionKernelBench {
		t.Errorf("default precision %q, want %s", cfg.Get("precision"), PrecisionKernelBench)
	}
	if strict := cfg.With("precision", PrecisionStrictIEEE); w.Tolerance(strict) != Tol {
		t.Errorf("strict-ieee tolerance %g, want %g", w.Tolerance(strict), Tol)
	}
	old := cfg
	old.Params = map[string]string{"problems": cfg.Get("problems"), "level": "1", "problem": "3", "dtype": "float32"}
	if PrecisionOf(old) != PrecisionStrictIEEE || w.Tolerance(old) != Tol {
		t.Errorf("a result without precision reads as %q, want %s", PrecisionOf(old), PrecisionStrictIEEE)
	}
	if _, err := workload.Resolve(w, "", map[string]string{"problems": cfg.Get("problems"), "problem": "3", "precision": "tf32"}, 3, 10); err == nil ||
		!strings.Contains(err.Error(), "strict-ieee") {
		t.Errorf("precision tf32: %v, want an error naming the allowed values", err)
	}
}
