package report

import (
	"path/filepath"
	"testing"

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
