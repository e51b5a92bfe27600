package problems

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

func timed(r result.Result, cold bool, timing string, warmup int) result.Result {
	r.Mode.ColdCache, r.Env.Timing, r.Config.Warmup = cold, timing, warmup
	return r
}

func TestMethodsNameBothSidesAndTheirDifference(t *testing.T) {
	dir := problemSet(t, map[int][]string{1: {"1_a.py", "2_b.py"}})
	ours := Entry{Mean: 10, L2: "cold", Timer: "cupti-kernel-span", Warmup: 3}
	warm := Entry{Mean: 10, L2: "warm", Timer: "cupti-kernel-span", Warmup: 3}
	kb := Entry{Mean: 2.66, Std: 0.0199, Min: 2.65, Max: 2.86} // KernelBench's own: no method keys, 3 significant digits
	span := func(id int) result.Result {
		return timed(res(dir, "candidates", 1, id, 5), true, "cupti-kernel-span: first kernel ...", 3)
	}
	kbTimed := func(id int) result.Result {
		return timed(res(dir, "candidates", 1, id, 5), true, "kernelbench-events: ...", 4)
	}
	tests := []struct {
		name       string
		entries    map[string]Entry
		rs         []result.Result
		base, res  string
		wantDiffer string
	}{
		{"same method", map[string]Entry{"1_a.py": ours, "2_b.py": ours}, []result.Result{span(1), span(2)},
			"L2 cold, timer cupti-kernel-span, 3 warmup calls, precision kernelbench (2 problems)",
			"L2 cold, timer cupti-kernel-span, 3 warmup calls, precision kernelbench (2 problems)", ""},
		{"warm baseline", map[string]Entry{"1_a.py": warm, "2_b.py": warm}, []result.Result{span(1), span(2)},
			"L2 warm, timer cupti-kernel-span", "L2 cold", "L2 warm against cold"},
		{"KernelBench's file against our clock", map[string]Entry{"1_a.py": kb, "2_b.py": kb}, []result.Result{span(1)},
			"L2 cold, timer kernelbench-events, 4 warmup calls, precision kernelbench (2 problems)", "cupti-kernel-span",
			"timer kernelbench-events against cupti-kernel-span"},
		{"KernelBench's file against its method", map[string]Entry{"1_a.py": kb, "2_b.py": kb}, []result.Result{kbTimed(1), kbTimed(2)},
			"kernelbench-events", "kernelbench-events", ""},
		// full-precision times without method keys: written by xbench before it recorded them
		{"an old xbench file", map[string]Entry{"1_a.py": {Mean: 0.06419232029467821}}, []result.Result{span(1)},
			"L2 unknown, timer unknown, 0 warmup calls, precision kernelbench (1 problems)", "cupti-kernel-span",
			"the baseline does not record how it was timed"},
	}
	for _, tt := range tests {
		b := Baseline{"level1": tt.entries}
		base, got, differ := Methods(b, tt.rs)
		if !strings.Contains(strings.Join(base, ";"), tt.base) || !strings.Contains(strings.Join(got, ";"), tt.res) || differ != tt.wantDiffer {
			t.Errorf("%s: baseline %q, results %q, differ %q; want %q, %q, %q", tt.name, base, got, differ, tt.base, tt.res, tt.wantDiffer)
		}
	}
}

func TestFromResultsRecordsTheMethod(t *testing.T) {
	dir := problemSet(t, map[int][]string{1: {"1_a.py"}})
	r := timed(res(dir, "pytorch", 1, 1, 5), false, "cupti-kernel-span: ...", 3)
	files, _ := FromResults([]result.Result{r})
	e := files["baseline_time_torch.json"]["level1"]["1_a.py"]
	if e.L2 != "warm" || e.Timer != "cupti-kernel-span" || e.Warmup != 3 || e.MethodOf() != ResultMethod(r) {
		t.Errorf("entry %+v does not record how its result was timed (%v)", e, ResultMethod(r))
	}
	if (Entry{Mean: 1, Max: 1, NumTrials: 1, L2: "tepid"}).check() == "" {
		t.Error("an l2 other than cold or warm is accepted")
	}
}

func TestScoreFlagsSpeedupsAboveTenForReview(t *testing.T) {
	dir := problemSet(t, map[int][]string{1: {"1_a.py", "2_b.py", "3_c.py"}})
	b := Baseline{"level1": {"1_a.py": {Mean: 100}, "2_b.py": {Mean: 100}, "3_c.py": {Mean: 100}}}
	// 20x and 10x exactly (not above) and 2x
	rs := []result.Result{res(dir, "candidates", 1, 1, 5), res(dir, "candidates", 1, 2, 10), res(dir, "candidates", 1, 3, 50)}
	scores := Score(b, rs)
	if len(scores) != 1 || strings.Join(scores[0].Review, ",") != "1_a.py: 20x" {
		t.Fatalf("review %q, want only 1_a.py at 20x", scores[0].Review)
	}
	var out bytes.Buffer
	WriteScores(&out, "b.json", scores)
	if !strings.Contains(out.String(), "review candidates level1 1_a.py: 20x: above 10x, look at the candidate before trusting it") {
		t.Errorf("output does not flag the 20x:\n%s", out.String())
	}
}
