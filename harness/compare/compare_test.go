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
	if a.Superseded != 0 || len(tab.Rows) != 2 || tab.Rows[0].Device != sweeptest.Device.Name || tab.Rows[1].Device != "cpu x86" {
		t.Fatalf("superseded %d, rows %+v: want one row per device", a.Superseded, tab.Rows)
	}
	var out strings.Builder
	if err := tab.Write(&out, 0.05); err != nil || !strings.Contains(out.String(), "pytorch (cpu x86)") || !strings.Contains(out.String(), "pytorch (NVIDIA H100 80GB HBM3)") {
		t.Errorf("mixed devices should name them:\n%s", out.String())
	}
}

// TestCompareSeparatesModels: an H100 and an H200 are both "cuda", yet
// neither result is an older duplicate of the other, and a result whose
// backend never named its device joins the folder's only model of its kind.
func TestCompareSeparatesModels(t *testing.T) {
	c := sweeptest.Config("125m", "linear", false, 512)
	h100 := sweeptest.Run("a", sweeptest.Backends[1], c, 1)
	h200 := sweeptest.Run("a", sweeptest.Backends[1], c, 2)
	h200.Device = result.Device{Kind: "cuda", Name: "NVIDIA H200", Count: 1}
	h200.Timestamp = "2026-02-02T00:00:00Z" // newer: it would supersede the H100 if keyed by kind
	a := NewSet("A", []result.Result{h100, h200})
	if a.Superseded != 0 || len(a.Results) != 2 {
		t.Fatalf("superseded %d of %d: an H200 result is not a newer H100 result", a.Superseded, len(a.Results))
	}
	var out strings.Builder
	if err := Compare(NewSet("A", []result.Result{h100}), NewSet("B", []result.Result{h200})).Write(&out, 0.05); err != nil ||
		!strings.Contains(out.String(), "A ran on NVIDIA H100 80GB HBM3, B on NVIDIA H200: results on different device models never pair") {
		t.Errorf("an H100 run against an H200 run should say why nothing pairs:\n%s", out.String())
	}
	unnamed := sweeptest.Run("a", sweeptest.Backends[0], c, 3)
	unnamed.Device = result.Device{Kind: "cuda"}
	one := NewSet("B", []result.Result{h100, unnamed})
	two := NewSet("C", []result.Result{h100, h200, unnamed})
	for _, tc := range []struct {
		set  *Set
		want string
	}{{one, sweeptest.Device.Model()}, {two, "cuda"}} {
		var got []string
		for _, r := range tc.set.Results {
			if r.Backend == sweeptest.Backends[0].Name {
				got = append(got, r.Device.Model())
			}
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: unnamed result on %v, want %q", tc.set.Dir, got, tc.want)
		}
	}
}
