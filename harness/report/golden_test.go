package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestTablesGolden: the standard sweep's fast_p and summary tables (the
// CSVs beside every report: ratios with their intervals, TFLOP/s, percent
// of peak, the verify verdict and the configuration it was verified on).
func TestTablesGolden(t *testing.T) {
	r := standard(t)
	for _, tb := range r.TextTables(shortNum) {
		data, err := tb.CSV()
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "standard-"+tb.Name+".golden", string(data))
	}
}
