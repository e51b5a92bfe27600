package history

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/history/historytest"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all"
)

var (
	gemmCfg  = historytest.Config
	commitOf = historytest.Commit
	steady   = historytest.Steady
)

func nightly(t *testing.T, root string, n int, factor func(int, string, string) float64,
	status func(int, string, string) result.Status) []string {
	t.Helper()
	dirs, err := historytest.Nightly(root, n, factor, status)
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestPlantedStep: twenty nights, nine series; triton at 1024 gets 8%
// slower from night 13 on. Exactly that step is found, at that commit,
// with an interval around 8%, and no other step anywhere, though one
// series has a failed night, one an unsupported one and one a missing one.
func TestPlantedStep(t *testing.T) {
	const stepAt = 13
	factor := func(night int, b, m string) float64 {
		if b == "triton" && m == "1024" && night >= stepAt {
			return 1.08
		}
		return 1
	}
	status := func(night int, b, m string) result.Status {
		switch {
		case b == "jax" && m == "256" && night == 5:
			return result.StatusFailed
		case b == "pytorch" && m == "4096" && night == 9:
			return result.StatusUnsupported
		case b == "jax" && m == "4096" && night == 15:
			return "" // not run that night
		}
		return result.StatusOK
	}
	dirs := nightly(t, t.TempDir(), 20, factor, status)
	// Folders given out of order: the history orders them by date.
	dirs[0], dirs[19] = dirs[19], dirs[0]
	h, err := Build(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != 20 || len(h.Series) != 9 {
		t.Fatalf("%d runs, %d series; want 20, 9", len(h.Runs), len(h.Series))
	}
	if h.DateNote == "" || h.Runs[0].DateSource != "timestamp" || h.Runs[0].Commit != commitOf(0) || h.Runs[19].Commit != commitOf(19) {
		t.Errorf("runs not ordered by timestamp with a note: note %q, first %+v", h.DateNote, h.Runs[0])
	}
	kinds := map[result.Status]int{}
	found := 0
	for _, s := range h.Series {
		if len(s.Points) != 20 {
			t.Errorf("%s %s: %d points, want one per run", s.Backend, s.Label, len(s.Points))
		}
		for _, p := range s.Points {
			kinds[p.Status]++
		}
		for _, st := range s.Steps {
			if s.Backend != "triton" || s.Label != gemmLabel("1024") {
				t.Errorf("false step in %s %s: %+v", s.Backend, s.Label, st)
				continue
			}
			found++
			if h.Runs[st.FirstBad].Commit != commitOf(stepAt) || h.Runs[st.LastGood].Commit != commitOf(stepAt-1) {
				t.Errorf("step at %s (last good %s), want first bad %s", h.Runs[st.FirstBad].Commit, h.Runs[st.LastGood].Commit, commitOf(stepAt))
			}
			if st.Lo > 1.08 || st.Hi < 1.08 || st.Lo <= 1.03 || st.Ratio < 1.05 || st.Ratio > 1.11 {
				t.Errorf("step size %.3f [%.3f, %.3f] does not fit the planted 8%%", st.Ratio, st.Lo, st.Hi)
			}
		}
	}
	if found != 1 {
		t.Errorf("found the planted step %d times, want once", found)
	}
	if kinds[result.StatusFailed] != 1 || kinds[result.StatusUnsupported] != 1 || kinds[StatusMissing] != 1 || kinds[result.StatusOK] != 177 {
		t.Errorf("point kinds %v; want 177 ok, 1 failed, 1 unsupported, 1 missing", kinds)
	}
}

// TestSeriesPerModel: ten nights on an H100 then ten on an H200 (10%
// faster, same code) are two series per cell, each steady: the change of
// GPU is no step and blames no commit.
func TestSeriesPerModel(t *testing.T) {
	device := func(night int) result.Device {
		if night >= 10 {
			return historytest.H200
		}
		return historytest.H100
	}
	factor := func(night int, _, _ string) float64 {
		if night >= 10 {
			return 0.9
		}
		return 1
	}
	dirs, err := historytest.NightlyOn(t.TempDir(), 20, device, factor, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Build(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 18 {
		t.Fatalf("%d series, want 9 cells on each of 2 models", len(h.Series))
	}
	for _, s := range h.Series {
		ok := 0
		for _, p := range s.Points {
			if p.OK() {
				ok++
			}
		}
		if ok != 10 || s.Device != "H100" && s.Device != "H200" {
			t.Errorf("%s %s on %q: %d ok points, want 10 on one model", s.Backend, s.Label, s.Device, ok)
		}
		if len(s.Steps) != 0 {
			t.Errorf("%s %s on %s: steps %+v across a change of GPU", s.Backend, s.Label, s.Device, s.Steps)
			for _, p := range s.Points {
				t.Logf("%d %.3f %.3f %.3f", p.Run, p.Median, p.Lo, p.Hi)
			}
		}
	}
}

func gemmLabel(m string) string { return workload.Label(gemmCfg(m)) }

// TestCommitDateOrders: when commit dates are known they order the runs
// (here against the timestamps) and no note is needed.
func TestCommitDateOrders(t *testing.T) {
	dirs := nightly(t, t.TempDir(), 4, steady, nil)
	base := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	date := func(c string) (time.Time, bool) {
		var night int
		fmt.Sscanf(c[1:3], "%d", &night)
		return base.Add(-time.Duration(night) * time.Hour), true // reversed
	}
	h, err := Build(dirs, Options{CommitDate: date})
	if err != nil {
		t.Fatal(err)
	}
	if h.DateNote != "" || h.Runs[0].Commit != commitOf(3) || h.Runs[0].DateSource != "commit" {
		t.Errorf("note %q, first run %+v; want commit order, newest commit date last", h.DateNote, h.Runs[0])
	}
}

// TestRegressions: the newest night on a step up beyond the threshold is a
// regression; below the threshold, a step down, or a steady series is not.
func TestRegressions(t *testing.T) {
	late := func(f float64) func(int, string, string) float64 {
		return func(night int, b, m string) float64 {
			if b == "pytorch" && m == "256" && night >= 17 {
				return f
			}
			return 1
		}
	}
	for _, tc := range []struct {
		name   string
		factor float64
		frac   float64
		want   int
	}{
		{"20% slower, 5% gate", 1.20, 0.05, 1},
		{"20% slower, 25% gate", 1.20, 0.25, 0},
		{"20% faster", 1 / 1.20, 0.05, 0},
		{"steady", 1, 0.05, 0},
	} {
		h, err := Build(nightly(t, t.TempDir(), 20, late(tc.factor), nil), Options{})
		if err != nil {
			t.Fatal(err)
		}
		reg := h.Regressions(tc.frac)
		if len(reg) != tc.want {
			t.Errorf("%s: %d regressions %v, want %d", tc.name, len(reg), reg, tc.want)
		}
		for _, r := range reg {
			if r.Series.Backend != "pytorch" || h.Runs[r.Step.FirstBad].Commit != commitOf(17) {
				t.Errorf("%s: regression %v, want pytorch at %s", tc.name, r, commitOf(17))
			}
		}
	}
}

func TestDetectNeedsEvidence(t *testing.T) {
	pt := func(run int, m, half float64) Point {
		return Point{Run: run, Status: result.StatusOK, Median: m, Lo: m - half, Hi: m + half}
	}
	// One wild point in the middle of a steady series is noise, not two steps.
	var pts []Point
	for i := range 12 {
		m := 10.0
		if i == 6 {
			m = 10.4
		}
		pts = append(pts, pt(i, m, 0.3))
	}
	if s := Detect(pts, DetectOptions{}); len(s) != 0 {
		t.Errorf("steps %+v in a steady series with wide intervals", s)
	}
	// The same 4% change held from point 6 on, with tight intervals, is one step.
	for i := 6; i < 12; i++ {
		pts[i] = pt(i, 10.4, 0.05)
	}
	for i := 0; i < 6; i++ {
		pts[i] = pt(i, 10, 0.05)
	}
	s := Detect(pts, DetectOptions{})
	if len(s) != 1 || s[0].FirstBad != 6 || math.Abs(s[0].Ratio-1.04) > 1e-9 {
		t.Errorf("steps %+v, want one of 1.04 at run 6", s)
	}
}

// TestDetectMinRuns: a clear 10% change in the last two runs is not yet a
// step (two nights off may be noise); from the third run on it is.
func TestDetectMinRuns(t *testing.T) {
	series := func(changed int) []Point {
		var pts []Point
		for i := range 12 {
			m := 10.0
			if i >= 12-changed {
				m = 11
			}
			pts = append(pts, Point{Run: i, Status: result.StatusOK, Median: m, Lo: m * 0.99, Hi: m * 1.01})
		}
		return pts
	}
	if s := Detect(series(2), DetectOptions{}); len(s) != 0 {
		t.Errorf("steps %+v from two runs", s)
	}
	if s := Detect(series(3), DetectOptions{}); len(s) != 1 || s[0].FirstBad != 9 {
		t.Errorf("steps %+v, want one at run 9 once three runs agree", s)
	}
	if s := Detect(series(2), DetectOptions{MinRuns: 2}); len(s) != 1 {
		t.Errorf("MinRuns 2: steps %+v, want one", s)
	}
}
