package result

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/schema"
)

// The committed schema must be what the Go types generate; regenerate with
// `go generate ./harness/result` after changing a field.
func TestCommittedSchemaIsFresh(t *testing.T) {
	got, err := GenerateSchema()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, schema.ResultJSON) {
		t.Fatal("schema/result.schema.json is stale: run `go generate ./harness/result` and commit it")
	}
}

func validResult() Result {
	return Result{SchemaVersion: SchemaVersion, RunID: "r1", Backend: "x", Status: StatusOK,
		Config: Config{Workload: "ttt", Phase: "forward", Params: map[string]string{"model_size": "tiny", "dtype": "float32"},
			Warmup: 1, Repeats: 2},
		Device: Device{Kind: "cpu", Count: 1}, SamplesMs: []float64{1, 2}, Env: Env{Framework: "go", Timing: "wall"}}
}

func TestValidateNamesTheField(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(m map[string]any)
		wantField string
	}{
		{"valid", func(map[string]any) {}, ""},
		{"bad status", func(m map[string]any) { m["status"] = "great" }, "/status"},
		{"bad phase", func(m map[string]any) { m["config"].(map[string]any)["phase"] = "sideways" }, "/config/phase"},
		{"param not a string", func(m map[string]any) { m["config"].(map[string]any)["params"].(map[string]any)["m"] = 4 }, "/config/params/m"},
		{"missing samples", func(m map[string]any) { delete(m, "samples_ms") }, "/"},
		{"samples not numbers", func(m map[string]any) { m["samples_ms"] = []any{"a"} }, "/samples_ms/0"},
		{"zero repeats", func(m map[string]any) { m["config"].(map[string]any)["repeats"] = 0 }, "/config/repeats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(validResult())
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			tt.mutate(m)
			raw, _ = json.Marshal(m)
			err := Validate(raw)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("valid result rejected: %v", err)
				}
				return
			}
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("want a SchemaError, got %v", err)
			}
			if se.Violations[0].Field != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", se.Violations[0].Field, tt.wantField, se)
			}
		})
	}
}

// Every violation is reported, in the same order on every run.
func TestValidateReportsAllViolationsStably(t *testing.T) {
	raw, _ := json.Marshal(validResult())
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	m["status"] = "great"
	m["samples_ms"] = []any{"a"}
	m["compile_ms"] = -1
	raw, _ = json.Marshal(m)
	first := Validate(raw).Error()
	for i := 0; i < 20; i++ {
		if got := Validate(raw).Error(); got != first {
			t.Fatalf("run %d: %q, first run %q", i, got, first)
		}
	}
	var se *SchemaError
	if !errors.As(Validate(raw), &se) || len(se.Violations) != 3 {
		t.Fatalf("want 3 violations, got %v", Validate(raw))
	}
}

// Results written before the workload axis (schema 1) load with their
// numbers, as TTT key/value configurations. They are the committed
// campaign results/h100, packed (xbench pack); read with archive/tar, as
// harness/store (which imports this package) cannot be used here.
func TestDecodeUpgradesVersion1(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "results", "h100", "h100.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := h.Name
		if strings.Count(p, "/") != 1 || !strings.HasSuffix(p, ".json") || strings.HasPrefix(filepath.Base(p), "_") {
			continue
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if r.Config.Workload != "ttt" || r.Config.Get("model_size") == "" || r.Config.Phase == "" || r.SchemaVersion != SchemaVersion {
			t.Fatalf("%s: not upgraded: %+v", p, r.Config)
		}
		if r.Status == StatusOK && (r.Throughput <= 0 || r.ThroughputUnit != "tokens/s") {
			t.Fatalf("%s: throughput %v %q", p, r.Throughput, r.ThroughputUnit)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d version-1 results found in results/h100/h100.tar.gz", n)
	}
}
