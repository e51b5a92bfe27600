package cli

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/sweep"
)

// TestSweepCSVIsExportCSV: `sweep --csv` and `export --format csv` on one
// sweep folder print the same header and rows (one export.CSV), and a cell
// that measured nothing is blank, not 0, in every numeric column but the
// sample count.
func TestSweepCSVIsExportCSV(t *testing.T) {
	dir := t.TempDir()
	folder := sweep.NewFolder(dir)
	ok := sweeptest.Run("run-c", sweeptest.Backends[0], sweeptest.Config("125m", "linear", false, 512), 1)
	unsupported := result.Result{SchemaVersion: result.SchemaVersion, RunID: "run-c", Backend: sweeptest.Backends[1].Name,
		Status: result.StatusUnsupported, Message: "no such kernel", Config: ok.Config, Device: ok.Device,
		SamplesMs: []float64{}, Timestamp: ok.Timestamp, Env: result.Env{Framework: "x", Timing: "cuda-events"}}
	for _, r := range []result.Result{ok, unsupported} {
		cell := sweep.Cell{Backend: r.Backend, Device: "cuda", Config: r.Config}
		if err := folder.Write(cell.Key(), r); err != nil {
			t.Fatal(err)
		}
	}
	fromSweep, _, code, err := runApp(t, "sweep", "--results", dir, "--csv")
	if code != 0 {
		t.Fatalf("sweep --csv: exit %d: %v", code, err)
	}
	fromExport, _, code, err := runApp(t, "export", "--results", dir, "--format", "csv")
	if code != 0 {
		t.Fatalf("export --format csv: exit %d: %v", code, err)
	}
	a, b := readRows(t, fromSweep), readRows(t, fromExport)
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("rows: sweep %d, export %d, want 2 each", len(a), len(b))
	}
	for backend, row := range a {
		if strings.Join(row.values, ",") != strings.Join(b[backend].values, ",") {
			t.Errorf("%s: sweep --csv and export differ:\n%v\n%v", backend, row.values, b[backend].values)
		}
	}
	if strings.SplitN(fromSweep, "\n", 2)[0] != strings.SplitN(fromExport, "\n", 2)[0] {
		t.Errorf("headers differ:\n%s\n%s", strings.SplitN(fromSweep, "\n", 2)[0], strings.SplitN(fromExport, "\n", 2)[0])
	}
	row := a[unsupported.Backend]
	for _, col := range []string{"median_ms", "mean_ms", "cv", "throughput", "peak_memory_bytes", "compile_ms", "num_params", "achieved_tflops"} {
		if v := row.get(t, col); v != "" {
			t.Errorf("unsupported cell: %s = %q, want blank", col, v)
		}
	}
	if v := row.get(t, "n_samples"); v != "0" {
		t.Errorf("unsupported cell: n_samples = %q, want the count 0", v)
	}
	if v := a[ok.Backend].get(t, "peak_memory_bytes"); v == "" || v == "0" {
		t.Errorf("ok cell: peak_memory_bytes = %q, want its number", v)
	}
}

type csvRow struct {
	header, values []string
}

func (r csvRow) get(t *testing.T, col string) string {
	t.Helper()
	for i, h := range r.header {
		if h == col {
			return r.values[i]
		}
	}
	t.Fatalf("no column %s in %v", col, r.header)
	return ""
}

// readRows maps backend to row.
func readRows(t *testing.T, text string) map[string]csvRow {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("not CSV (%v):\n%s", err, text)
	}
	out := map[string]csvRow{}
	for _, r := range rows[1:] {
		out[r[1]] = csvRow{header: rows[0], values: r}
	}
	return out
}
