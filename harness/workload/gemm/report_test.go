package gemm

import (
	"math"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/view"
)

// fakeResults serves medians from a table: backend -> m -> ms.
type fakeResults struct {
	cfgs []result.Config
	ms   map[string]map[string]float64
}

func (f fakeResults) Backends() []string       { return []string{"base", "fast"} }
func (f fakeResults) Baseline() string         { return "base" }
func (f fakeResults) Configs() []result.Config { return f.cfgs }
func (f fakeResults) Result(string, result.Config) (result.Result, bool) {
	return result.Result{}, false
}
func (f fakeResults) Median(b string, c result.Config) float64 {
	if v, ok := f.ms[b][c.Get("m")]; ok {
		return v
	}
	return math.NaN()
}
func (f fakeResults) Interval(string, result.Config) (float64, float64) {
	return math.NaN(), math.NaN()
}

// GEMM's sections count the winners per dtype and take the geometric mean
// of the ratio per m, shading an m the other backend never ran.
func TestReportSections(t *testing.T) {
	cfg := func(m string) result.Config {
		return result.Config{Workload: Name, Params: map[string]string{"m": m, "n": "64", "k": "64", "dtype": "float32"}}
	}
	v := fakeResults{cfgs: []result.Config{cfg("16"), cfg("32"), cfg("64")},
		ms: map[string]map[string]float64{"base": {"16": 1, "32": 1, "64": 1}, "fast": {"16": 0.5, "32": 2}}}
	secs := Workload{}.ReportSections(v)
	byName := map[string]*view.Chart{}
	for _, s := range secs {
		if s.Place != view.AfterGrids || !s.ReplacesGrid || s.Chart == nil {
			t.Errorf("section %+v: want an aggregate chart after the grids", s)
			continue
		}
		byName[s.Chart.Name] = s.Chart
	}
	w := byName["shape-winners"]
	if w == nil {
		t.Fatalf("no winners chart among %v", byName)
	}
	got := w.Panels[0].Bars.Groups
	if got[0].Values[0] != 2 || got[1].Values[0] != 1 { // base wins 32 and 64, fast 16
		t.Errorf("winners %+v, want base 2, fast 1", got)
	}
	g := byName["ratio-over-shapes"].Panels[0].Grid
	if g.Cells[0][0].Text != "0.50x" || g.Cells[1][0].Text != "2.00x" || !g.Cells[2][0].Shaded {
		t.Errorf("ratio cells %+v", g.Cells)
	}
}

func (f fakeResults) MatmulPeak(result.Device, string) float64 { return 0 }
