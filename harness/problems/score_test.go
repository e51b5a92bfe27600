package problems

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

// problemSet writes empty problem files per level into a temp folder.
func problemSet(t *testing.T, levels map[int][]string) string {
	t.Helper()
	dir := t.TempDir()
	for lv, names := range levels {
		d := filepath.Join(dir, LevelKey(lv))
		os.MkdirAll(d, 0o755)
		for _, n := range names {
			os.WriteFile(filepath.Join(d, n), []byte("#\n"), 0o644)
		}
	}
	return dir
}

// res is a result of one problem; mean 0 makes it failed.
func res(dir, backend string, level, id int, mean float64) result.Result {
	r := result.Result{Backend: backend, Status: result.StatusOK, Device: result.Device{Kind: "cpu", Name: "cpu"},
		Config: result.Config{Workload: "problem", Phase: "forward", Params: map[string]string{
			"problems": dir, "level": itoa(level), "problem": itoa(id), "dtype": "float32", "precision": "kernelbench"}, Repeats: 10},
		Stats: &result.Stats{MeanMs: mean, MedianMs: mean, StdMs: 0.5, MinMs: mean - 0.5, MaxMs: mean + 1, SampleCount: 10}}
	if mean == 0 {
		r.Status, r.Stats, r.Message = result.StatusFailed, nil, "incorrect: max abs err 94.3 at seed 0 (atol 0.01, rtol 0.01)"
	}
	return r
}

func itoa(n int) string { return strconv.Itoa(n) }

// A hand-made example: every number below is worked out by hand.
//
//	level1, baseline mean 10 ms each: 1_a at 4 ms (2.5x), 2_b at 8 ms (1.25x),
//	3_c incorrect, 4_d never submitted  -> fast_0 2/4, fast_1 2/4, fast_1.5 1/4, fast_2 1/4, fast_3 0
//	level2, baseline 4 ms: 1_x at 8 ms (0.5x) -> fast_0 1, fast_0.25 1, fast_0.5 0 (not above), fast_1 0
func TestScoreHandMade(t *testing.T) {
	dir := problemSet(t, map[int][]string{1: {"1_a.py", "2_b.py", "3_c.py", "4_d.py"}, 2: {"1_x.py"}})
	b := Baseline{
		"level1": {"1_a.py": {Mean: 10}, "2_b.py": {Mean: 10}, "3_c.py": {Mean: 10}, "4_d.py": {Mean: 10}},
		"level2": {"1_x.py": {Mean: 4}},
	}
	rs := []result.Result{
		res(dir, "candidates", 1, 1, 4), res(dir, "candidates", 1, 2, 8), res(dir, "candidates", 1, 3, 0),
		res(dir, "candidates", 2, 1, 8),
	}
	scores := Score(b, rs)
	if len(scores) != 2 || scores[0].Level != "level1" || scores[1].Level != "level2" {
		t.Fatalf("scores %+v: want candidates on level1 then level2", scores)
	}
	want := map[string]map[float64]float64{
		"level1": {0: 0.5, 1: 0.5, 1.25: 0.25, 1.5: 0.25, 2: 0.25, 2.5: 0, 3: 0},
		"level2": {0: 1, 0.25: 1, 0.5: 0, 1: 0, 2: 0},
	}
	for _, s := range scores {
		if s.Total != len(b[s.Level]) {
			t.Errorf("%s total %d, want %d", s.Level, s.Total, len(b[s.Level]))
		}
		for p, w := range want[s.Level] {
			if got := s.FastP(p); math.Abs(got-w) > 1e-12 {
				t.Errorf("%s fast_%g = %g, want %g", s.Level, p, got, w)
			}
		}
	}
	if m := scores[0].MaxSpeedup(); m != 2.5 {
		t.Errorf("max speedup %g, want 2.5", m)
	}
	var out bytes.Buffer
	WriteScores(&out, "b.json", scores)
	for _, line := range []string{"candidates                       level1        4    0.500    0.500    0.250          2.5",
		"curve candidates level2  0:1.000 0.25:1.000 0.5:0.000"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
}

func TestNaturalOrder(t *testing.T) {
	got := sortedKeys(map[string]int{"10_a.py": 0, "2_b.py": 0, "1_c.py": 0, "level10": 0, "level2": 0})
	if strings.Join(got, " ") != "1_c.py 2_b.py 10_a.py level2 level10" {
		t.Errorf("order %v", got)
	}
}

// CheckHardware sorts each shared problem's (baseline, result) pair into a
// kind mismatch (refused by the CLI), a name mismatch (warned) or neither.
func TestCheckHardware(t *testing.T) {
	dir := problemSet(t, map[int][]string{1: {"1_a.py", "2_b.py"}})
	onGPU := func(r result.Result, name string) result.Result {
		r.Device = result.Device{Kind: "cuda", Name: name}
		return r
	}
	h100 := Entry{Mean: 1, Hardware: "NVIDIA H100 80GB HBM3", Device: "cuda:0"}
	cpu := Entry{Mean: 1, Hardware: "cpu", Device: "cpu"}
	cases := []struct {
		name         string
		base         Entry
		r            result.Result
		kinds, names int
	}{
		{"same gpu", h100, onGPU(res(dir, "c", 1, 1, 2), "NVIDIA H100 80GB HBM3"), 0, 0},
		{"same cpu", cpu, res(dir, "c", 1, 1, 2), 0, 0},
		{"cpu results, gpu baseline", h100, res(dir, "c", 1, 1, 2), 1, 0},
		{"gpu results, cpu baseline", cpu, onGPU(res(dir, "c", 1, 1, 2), "NVIDIA H100 80GB HBM3"), 1, 0},
		{"other gpu", h100, onGPU(res(dir, "c", 1, 1, 2), "NVIDIA H100 PCIe"), 0, 1},
		{"rocm result, kernelbench cuda:0", h100, func() result.Result {
			r := onGPU(res(dir, "c", 1, 1, 2), "NVIDIA H100 80GB HBM3")
			r.Device.Kind = "rocm"
			return r
		}(), 0, 0},
		{"failed result is not compared", h100, res(dir, "c", 1, 1, 0), 0, 0},
		{"problem not in the baseline", h100, res(dir, "c", 1, 2, 2), 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Baseline{"level1": {"1_a.py": c.base}}
			h := CheckHardware(b, []result.Result{c.r})
			if len(h.Kinds) != c.kinds || len(h.Names) != c.names {
				t.Errorf("CheckHardware = %+v, want %d kind and %d name mismatches", h, c.kinds, c.names)
			}
			for _, s := range slices.Concat(h.Kinds, h.Names) {
				if !strings.Contains(s, c.base.Hardware) || !strings.Contains(s, c.r.Device.Name) {
					t.Errorf("mismatch %q should name both %q and %q", s, c.base.Hardware, c.r.Device.Name)
				}
			}
		})
	}
}
