package result

import (
	"bytes"
	"encoding/json"
	"errors"
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
		Config: Config{Workload: "ttt", ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 64, MiniBatch: 16,
			Dtype: "float32", Backbone: "transformer", Warmup: 1, Repeats: 2},
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
		{"bad dtype", func(m map[string]any) { m["config"].(map[string]any)["dtype"] = "int4" }, "/config/dtype"},
		{"missing samples", func(m map[string]any) { delete(m, "samples_ms") }, "/"},
		{"samples not numbers", func(m map[string]any) { m["samples_ms"] = []any{"a"} }, "/samples_ms/0"},
		{"negative batch", func(m map[string]any) { m["config"].(map[string]any)["batch"] = 0 }, "/config/batch"},
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
			if se.Field != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", se.Field, tt.wantField, se)
			}
		})
	}
}
