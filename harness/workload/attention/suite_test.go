package attention

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/workload"
)

// Every suite shape resolves (passes Check) with the defaults and with the
// flags a user combines it with.
func TestSuites(t *testing.T) {
	tests := []struct {
		spec  string
		count int
		first map[string]string
		last  map[string]string
	}{
		{"llm", 36,
			map[string]string{"batch": "32", "heads": "12", "kv_heads": "12", "seq_len": "512", "head_dim": "64", "causal": "true"},
			map[string]string{"batch": "1", "heads": "16", "kv_heads": "16", "seq_len": "16384", "head_dim": "256", "causal": "true"}},
		{"grid", 18,
			map[string]string{"batch": "32", "heads": "32", "kv_heads": "0", "seq_len": "512", "head_dim": "64"},
			map[string]string{"batch": "1", "heads": "8", "seq_len": "16384", "head_dim": "256"}},
	}
	for _, tc := range tests {
		shapes, err := Workload{}.Suite(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if len(shapes) != tc.count {
			t.Errorf("%s: %d shapes, want %d", tc.spec, len(shapes), tc.count)
		}
		seen := map[string]bool{}
		for _, sh := range shapes {
			for _, phase := range []string{"", workload.PhaseBoth} {
				cfg, err := workload.Resolve(Workload{}, phase, sh, 3, 10)
				if err != nil {
					t.Fatalf("%s shape %v: %v", tc.spec, sh, err)
				}
				if s := ShapeOf(cfg); s.Batch*s.SeqLen != suiteTokens {
					t.Errorf("%s shape %v: %d tokens, want %d", tc.spec, sh, s.Batch*s.SeqLen, suiteTokens)
				}
				if seen[workload.Key(cfg)] {
					t.Errorf("%s: %v twice", tc.spec, sh)
				}
				seen[workload.Key(cfg)] = true
			}
		}
		for k, v := range tc.first {
			if shapes[0][k] != v {
				t.Errorf("%s first shape %v, want %s = %s", tc.spec, shapes[0], k, v)
			}
		}
		for k, v := range tc.last {
			if shapes[len(shapes)-1][k] != v {
				t.Errorf("%s last shape %v, want %s = %s", tc.spec, shapes[len(shapes)-1], k, v)
			}
		}
	}
	// grid leaves causal to the flags.
	grid, _ := Workload{}.Suite("grid")
	if _, ok := grid[0]["causal"]; ok {
		t.Error("grid sets causal")
	}
}

func TestCSVSuite(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "batch,heads,kv_heads,seq_len,kv_len,head_dim,causal\n# a comment\n\n1, 32, 8, 2048, 0, 128\n2,16,16,100,300,64,false\n")
	shapes, err := Workload{}.Suite(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(shapes) != 2 || shapes[0]["kv_heads"] != "8" || shapes[0]["causal"] != "" || shapes[1]["kv_len"] != "300" || shapes[1]["causal"] != "false" {
		t.Errorf("shapes %v", shapes)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"fields", "1,2,3\n", "bad.csv:1: 3 fields"},
		{"value", "1,32,8,2048,0,512\n", "bad.csv:1: --head-dim \"512\""},
		{"causal", "1,32,8,2048,0,64,maybe\n", "--causal \"maybe\""},
		{"empty", "# nothing\n", "no shapes"},
	} {
		_, err := Workload{}.Suite(write("bad.csv", tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := (Workload{}).Suite(filepath.Join(dir, "none.csv")); err == nil || !strings.Contains(err.Error(), "llm, grid") {
		t.Errorf("missing file: %v", err)
	}
}
