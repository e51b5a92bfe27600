package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/scan"
)

// TestScanTables: synthetic scan results where fast is 10 ms flat and slow grows
// with K·C (1 ms per unit), so fast wins from K·C 12 on; max costs 2x log.
func TestScanTables(t *testing.T) {
	dir := t.TempDir()
	var rs []result.Result
	for _, kc := range [][2]int{{2, 3}, {4, 3}, {4, 6}} {
		for _, sr := range []string{"log", "max"} {
			for _, phase := range []string{"forward", "backward"} {
				if sr == "max" && phase == "backward" {
					continue
				}
				cfg, err := workload.Resolve(scan.Workload{}, phase, map[string]string{"T": "64", "K": fmt.Sprint(kc[0]), "C": fmt.Sprint(kc[1]),
					"batch": "2", "semiring": sr}, 1, 3)
				if err != nil {
					t.Fatal(err)
				}
				for b, ms := range map[string]float64{"fast": 10, "slow": float64(kc[0] * kc[1])} {
					if sr == "max" {
						ms *= 2
					}
					if phase == "backward" {
						ms *= 3
					}
					r := result.Result{SchemaVersion: result.SchemaVersion, RunID: "r", Backend: b, Status: result.StatusOK, Config: cfg,
						Device: sweeptest.Device, SamplesMs: []float64{ms, ms, ms}, Env: result.Env{Framework: b, Timing: "events"},
						Timestamp: sweeptest.Timestamp, PeakMemoryBytes: 64 * 2 * int64(kc[1]) * 4}
					rs = append(rs, sweeptest.Finalize(r))
				}
			}
		}
	}
	if err := sweeptest.Write(dir, rs); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir, "slow")
	if err != nil {
		t.Fatal(err)
	}
	var tables []TextTable
	for _, tb := range r.TextTables(fullNum) {
		if strings.HasPrefix(tb.Name, "scan") {
			tables = append(tables, tb)
		}
	}
	if len(tables) != 2 {
		t.Fatalf("%d scan tables, want 2", len(tables))
	}
	charts := chartsByName(t, r)
	col := func(tb TextTable, name string) int { return slices.Index(tb.Header, name) }
	main := tables[0]
	found := 0
	for _, row := range main.Rows {
		if row[0] != "fast" || row[6] != "4" || row[7] != "3" {
			continue
		}
		switch row[1] + " " + row[2] {
		case "log forward":
			found++
			for name, want := range map[string]string{"backward/forward": "3", "bytes per state-position": "4", "time ratio to baseline": fmt.Sprint(10.0 / 12)} {
				if got := row[col(main, name)]; got != want {
					t.Errorf("fast log forward K4 C3 %s = %s, want %s", name, got, want)
				}
			}
		case "max forward":
			found++
			if got := row[col(main, "time / log time")]; got != "2" {
				t.Errorf("max over log = %s, want 2", got)
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d of the fast K4 C3 rows:\n%v", found, main.Rows)
	}
	for _, name := range []string{"scan-time-vs-kc", "scan-ratio-maps"} {
		if c := charts[name]; c == nil || len(c.Panels) == 0 {
			t.Errorf("scan chart %s: %v", name, c)
		}
	}
	if c := charts["scan-time-vs-t"]; c != nil {
		t.Errorf("time against T drawn from one T: %s", c.Name)
	}
	var cross []string
	for _, row := range tables[1].Rows {
		if row[0] == "fast" && row[1] == "log" && row[2] == "forward" && row[5] == "T=64" {
			cross = row
		}
	}
	// slow takes 6, 12, 24 ms at K·C 6, 12, 24: fast (10 ms) wins from 12 on
	if cross == nil || cross[7] != "12" || cross[8] != "3" {
		t.Errorf("crossover row %v, want K·C 12 over 3 points; table:\n%s", cross, strings.Join(tables[1].Header, ","))
	}
	// Against K·C, T and C are held: the panel's line runs over K at C 3
	// (K·C 6 and 12), never joining K4 C6 (K·C 24) to them.
	kc := charts["scan-time-vs-kc"]
	if kc == nil {
		t.Fatal("no scan time against K·C")
	}
	if title := kc.Panels[0][0].Title.Text; !strings.HasSuffix(title, "T64 C3") {
		t.Errorf("K·C panel %q does not hold C", title)
	}
	// The crossover table is in the page, not only behind a CSV link.
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(out)
	for _, id := range []string{"scan", "scan-crossover"} {
		if err != nil || !strings.Contains(string(page), `<h2 id="`+id+`">`) || !strings.Contains(string(page), `href="#`+id+`"`) {
			t.Errorf("the page does not show the %s table in its contents (%v)", id, err)
		}
	}
	// Memory per state-position against K·C, from the peaks the results
	// report: fast's 4 bytes per state-position at K4 C3.
	if charts["scan-memory-vs-kc"] == nil {
		t.Error("no scan memory against K·C")
	}
	// The analysis tables as the CSVs write them, against golden files.
	for _, tb := range tables {
		data, err := tb.CSV()
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "scan-"+tb.Name+".golden", string(data))
	}
}

// TestScanPanelsHoldOneValue: neighbouring panels of time against T hold K
// and C at the same values (the most measured over the figure), even where
// a panel's own most measured pair is another.
func TestScanPanelsHoldOneValue(t *testing.T) {
	dir := t.TempDir()
	var rs []result.Result
	add := func(sr, phase, k string, ts ...int) {
		for _, T := range ts {
			cfg, err := workload.Resolve(scan.Workload{}, phase, map[string]string{"T": fmt.Sprint(T), "K": k, "C": "3", "batch": "2", "semiring": sr}, 1, 3)
			if err != nil {
				t.Fatal(err)
			}
			r := result.Result{SchemaVersion: result.SchemaVersion, RunID: "r", Backend: "fast", Status: result.StatusOK, Config: cfg,
				Device: sweeptest.Device, SamplesMs: []float64{1, 1, 1}, Env: result.Env{Framework: "fast", Timing: "events"},
				Timestamp: sweeptest.Timestamp}
			rs = append(rs, sweeptest.Finalize(r))
		}
	}
	add("log", "forward", "4", 64, 128, 256)
	add("log", "forward", "2", 64, 128)
	add("max", "forward", "2", 64, 128, 256) // its own most measured: K2
	add("max", "forward", "4", 64, 128)
	add("log", "backward", "4", 64, 128)
	if err := sweeptest.Write(dir, rs); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	c := chartsByName(t, r)["scan-time-vs-t"]
	if c == nil {
		t.Fatal("no time against T")
	}
	n := 0
	for _, row := range c.Panels {
		for _, p := range row {
			n++
			if !strings.HasSuffix(p.Title.Text, "K4 C3") {
				t.Errorf("panel %q does not hold K4 C3, the figure's most measured", p.Title.Text)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d panels, want 3", n)
	}
}

// chartsByName is every chart of r's report by name.
func chartsByName(t *testing.T, r *Report) map[string]*Chart {
	t.Helper()
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Chart{}
	for i := range charts {
		out[charts[i].Name] = &charts[i]
	}
	return out
}
