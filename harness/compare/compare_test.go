package compare

import (
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
)

func TestCompareVerdicts(t *testing.T) {
	a := sweeptest.Sweep("a")
	tests := []struct {
		name      string
		b         []result.Result
		want      Verdict // of every row with samples on both sides
		regressed bool
	}{
		{"same", a, NoChange, false},
		{"30% slower", sweeptest.Scaled(a, 1.3, "b"), Slower, true},
		{"3% slower", sweeptest.Scaled(a, 1.03, "b"), Slower, false}, // significant, under the 5% threshold
		{"20% faster", sweeptest.Scaled(a, 0.8, "b"), Faster, false},
	}
	for _, tt := range tests {
		tab := Compare(NewSet("A", a), NewSet("B", tt.b))
		if len(tab.Rows) != len(a) {
			t.Fatalf("%s: %d rows, want %d", tt.name, len(tab.Rows), len(a))
		}
		for _, r := range tab.Rows {
			if r.StatusA == result.StatusOK && r.Verdict != tt.want {
				t.Errorf("%s: %s %s: verdict %q (ratio %.3f p %.3g), want %q", tt.name, Label(r.Config), r.Backend, r.Verdict, r.Ratio, r.P, tt.want)
			}
			if r.StatusA == result.StatusOOM && r.Verdict != NoData {
				t.Errorf("%s: oom on both sides gave %q", tt.name, r.Verdict)
			}
		}
		if got := len(tab.Regressions(0.05)) > 0; got != tt.regressed {
			t.Errorf("%s: regressed = %v, want %v", tt.name, got, tt.regressed)
		}
	}
}

func TestCompareUnmatched(t *testing.T) {
	c := sweeptest.Config("125m", "linear", false, 512)
	ok := sweeptest.Run("a", sweeptest.Backends[0], c, 1)
	oom := ok
	oom.Status, oom.SamplesMs, oom.Stats = result.StatusOOM, []float64{}, nil
	other := sweeptest.Run("a", sweeptest.Backends[1], c, 2)
	tab := Compare(NewSet("A", []result.Result{ok, other}), NewSet("B", []result.Result{oom}))
	got := map[string]Verdict{}
	for _, r := range tab.Rows {
		got[r.Backend] = r.Verdict
	}
	if got["burnstyle-hip"] != Broken || got["pytorch"] != OnlyA {
		t.Errorf("verdicts %v, want burnstyle-hip broken, pytorch only in A", got)
	}
	if len(tab.Regressions(0.05)) != 1 || tab.GeomeanN != 0 {
		t.Errorf("regressions %d geomean n %d; want 1 and 0", len(tab.Regressions(0.05)), tab.GeomeanN)
	}
}

func TestNewSetKeepsNewest(t *testing.T) {
	c := sweeptest.Config("125m", "linear", false, 512)
	old := sweeptest.Run("a", sweeptest.Backends[0], c, 1)
	newer := sweeptest.Run("b", sweeptest.Backends[0], c, 2)
	old.Timestamp, newer.Timestamp = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
	s := NewSet("x", []result.Result{newer, old})
	for _, r := range s.Results {
		if r.RunID != "b" || s.Superseded != 1 {
			t.Errorf("kept run %q, superseded %d; want b, 1", r.RunID, s.Superseded)
		}
	}
}

func TestCompareSeparatesDevices(t *testing.T) {
	c := sweeptest.Config("125m", "linear", false, 512)
	gpu := sweeptest.Run("a", sweeptest.Backends[1], c, 1)
	host := sweeptest.Run("a", sweeptest.Backends[1], c, 2)
	host.Device = result.Device{Kind: "cpu", Name: "x86", Count: 1}
	host.SamplesMs = scale(host.SamplesMs, 50)
	host = sweeptest.Finalize(host)
	a := NewSet("A", []result.Result{gpu, host})
	tab := Compare(a, NewSet("B", sweeptest.Scaled([]result.Result{gpu, host}, 1, "b")))
	if a.Superseded != 0 || len(tab.Rows) != 2 || tab.Rows[0].DeviceKind != "cpu" || tab.Rows[1].DeviceKind != "cuda" {
		t.Fatalf("superseded %d, rows %+v: want one row per device", a.Superseded, tab.Rows)
	}
	var out strings.Builder
	if err := tab.Write(&out, 0.05); err != nil || !strings.Contains(out.String(), "pytorch (cpu)") || !strings.Contains(out.String(), "pytorch (cuda)") {
		t.Errorf("mixed devices should name them:\n%s", out.String())
	}
}
