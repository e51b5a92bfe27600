package facts

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed Python copy must be what the Go declarations generate, so a
// changed default, enum value, size or version cannot leave the Python
// backends behind; plugins/_python/tests/test_facts.py checks the other
// side (the Python views and constants read only this file).
func TestCommittedFactsAreFresh(t *testing.T) {
	want, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(PythonPath)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `go generate ./harness/facts` and commit it", PythonPath)
	}
}
