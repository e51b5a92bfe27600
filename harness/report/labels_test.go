package report

import (
	"path/filepath"
	"testing"

	gplot "gonum.org/v1/plot"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
)

func TestDistinctLabels(t *testing.T) {
	problem := func(precision, phase string) result.Config {
		return result.Config{Workload: "problem", Phase: phase, Params: map[string]string{
			"problems": "/nowhere", "level": "2", "problem": "1", "dtype": "float32", "precision": precision}}
	}
	tests := []struct {
		name string
		cfgs []result.Config
		want []string
	}{
		{"one label each: unchanged", []result.Config{problem("kernelbench", "forward")}, []string{"level2/1"}},
		{"precision tells them apart", []result.Config{problem("kernelbench", "forward"), problem("strict-ieee", "forward")},
			[]string{"level2/1 precision=kernelbench", "level2/1 precision=strict-ieee"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := distinctLabels(tt.cfgs)
			for i, c := range tt.cfgs {
				if l := got[compare.ConfigKey(c)]; l != tt.want[i] {
					t.Errorf("label of %v = %q, want %q", c.Params, l, tt.want[i])
				}
			}
		})
	}
}

// TestCommittedReportsLabelRowsApart: no two configurations of a committed
// results folder share a row label (the KernelBench set ran each problem
// under two precisions; its heat maps showed level2/1 twice).
func TestCommittedReportsLabelRowsApart(t *testing.T) {
	for _, dir := range []string{"h100-kernelbench", "h100-scan", filepath.Join("h100-attention", "sweep"), "h100-table"} {
		r, err := Load(filepath.Join("..", "..", "results", dir), "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, tab := range r.Tables() {
			if seen[tab.Label] {
				t.Errorf("%s: two configurations read %q", dir, tab.Label)
			}
			seen[tab.Label] = true
		}
	}
}

// TestCommittedChartsTellRowsApart: no chart of a committed results
// folder has two panels of one title, or an axis (a heat map's rows and
// columns, a bar chart's categories) naming two ticks alike.
func TestCommittedChartsTellRowsApart(t *testing.T) {
	for _, dir := range []string{"h100-kernelbench", "h100-scan", filepath.Join("h100-attention", "sweep"), "h100-table", filepath.Join("h100-sweep-15", "sweep")} {
		r, err := Load(filepath.Join("..", "..", "results", dir), "")
		if err != nil {
			t.Fatal(err)
		}
		charts, err := r.Charts()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range charts {
			titles := map[string]bool{}
			for _, row := range c.Panels {
				for _, p := range row {
					if p.Title.Text != "" && titles[p.Title.Text] {
						t.Errorf("%s %s: two panels titled %q", dir, c.Name, p.Title.Text)
					}
					titles[p.Title.Text] = true
					for _, ax := range []gplot.Ticker{p.X.Tick.Marker, p.Y.Tick.Marker} {
						ticks, ok := ax.(gplot.ConstantTicks)
						if !ok {
							continue
						}
						labels := map[string]bool{}
						for _, tk := range ticks {
							if tk.Label != "" && labels[tk.Label] {
								t.Errorf("%s %s panel %q: two ticks read %q", dir, c.Name, p.Title.Text, tk.Label)
							}
							labels[tk.Label] = true
						}
					}
				}
			}
		}
	}
}
