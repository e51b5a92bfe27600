package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/gemm"
	"github.com/xbench/xbench/harness/workload/view"
)

// The report asks the registry, not a list of names: a workload without
// workload.Reporter gets no sections of its own, one with it gets its own.
func TestWorkloadSectionsThroughTheRegistry(t *testing.T) {
	without := 0
	for _, w := range workload.All() {
		r := &Report{Backends: []string{"a", "b"}, Baseline: "a",
			Configs: []result.Config{{Workload: w.Name(), Phase: w.Phases()[0], Params: map[string]string{"dtype": "float32"}}}}
		secs := r.workloadSections()
		if _, ok := w.(workload.Reporter); !ok {
			without++
			if len(secs) != 0 {
				t.Errorf("%s has no Reporter but got %d sections", w.Name(), len(secs))
			}
		}
	}
	if without == 0 {
		t.Error("every registered workload has a Reporter: the test above checked nothing")
	}
	r := &Report{Backends: []string{"a", "b"}, Baseline: "a",
		Configs: []result.Config{{Workload: gemm.Name, Params: map[string]string{"m": "16", "n": "16", "k": "16", "dtype": "float32"}}}}
	if len(r.workloadSections()) == 0 {
		t.Error("gemm's configurations got none of its sections")
	}
}

// The choice of what a moved workload shows lives in its package: the
// report's code names none of its parameters or its package.
func TestReportNamesNoMovedWorkload(t *testing.T) {
	forbidden := map[string][]string{
		"gemm":      {`"m"`, `"n"`, `"k"`, `workload/gemm"`, `"gemm"`},
		"ttt":       {`workload/ttt"`, `"ttt"`, `"model_size"`, `"ttt_type"`, `"mini_batch"`},
		"attention": {`"seq_len"`, `"kv_len"`, `workload/attention"`, `"attention"`},
		"scan":      {`"T"`, `"K"`, `"C"`, `"semiring"`, `workload/scan"`, `"scan"`},
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for w, words := range forbidden {
			for _, s := range words {
				if strings.Contains(string(src), s) {
					t.Errorf("%s names %s, which belongs to workload %s's Reporter", f, s, w)
				}
			}
		}
	}
}

// A workload's figure is drawn at most maxPanels panels wide, the rest
// counted in its caption, however many panels the workload describes.
func TestDrawChartBoundsPanels(t *testing.T) {
	r := &Report{Backends: []string{"a"}}
	c := view.Chart{Name: "x", Title: "X", Caption: "Lines.", Cut: 1}
	for range maxPanels + 3 {
		c.Panels = append(c.Panels, view.Panel{Lines: []view.Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}})
	}
	got, err := r.drawChart(c)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range got.Panels {
		n += len(row)
	}
	if n != maxPanels || !strings.HasSuffix(got.Caption, " 4 more panels are not drawn.") {
		t.Errorf("%d panels, caption %q: want %d and 4 more", n, got.Caption, maxPanels)
	}
}
