package gemm

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/workload"
)

// expand runs Suite and resolves every configuration it names, as the
// harness will: a shape a suite emits must be valid.
func expand(t *testing.T, spec string) []map[string]string {
	t.Helper()
	got, err := Workload{}.Suite(spec)
	if err != nil {
		t.Fatalf("Suite(%q): %v", spec, err)
	}
	for _, set := range got {
		if _, err := workload.Resolve(Workload{}, "", set, 0, 1); err != nil {
			t.Fatalf("Suite(%q) emitted %v: %v", spec, set, err)
		}
	}
	return got
}

func TestSquareSuite(t *testing.T) {
	got := expand(t, "square")
	var sizes []string
	for _, s := range got {
		if s["m"] != s["n"] || s["n"] != s["k"] || len(s) != 3 {
			t.Errorf("square shape %v: want m = n = k and nothing else set", s)
		}
		sizes = append(sizes, s["m"])
	}
	want := "256 384 512 768 1024 1536 2048 3072 4096 6144 8192 12288 16384"
	if strings.Join(sizes, " ") != want {
		t.Errorf("square sizes %v, want %s", sizes, want)
	}
}

func TestLLMSuite(t *testing.T) {
	got := expand(t, "llm")
	if len(got) < 120 || len(got) > 400 {
		t.Errorf("llm suite has %d shapes, want 120 to 400", len(got))
	}
	// 8 models × 4 GEMMs × 8 token counts = 256, less Mistral-7B (all 32
	// repeat Llama-3-8B), GPT-2's QKV and output projections (16, as
	// TTT-125m's) and Llama-3-8B's output projection (8, as Llama-2-7B's).
	if len(got) != 200 {
		t.Errorf("llm suite has %d shapes, docs/workloads/gemm.md says 200", len(got))
	}
	seen := map[string]bool{}
	for _, s := range got {
		key := s["m"] + "x" + s["n"] + "x" + s["k"] + " " + s["layout"]
		if seen[key] {
			t.Errorf("duplicate shape %s", key)
		}
		seen[key] = true
		if s["layout"] != "nt" {
			t.Errorf("shape %v: want layout nt", s)
		}
	}
	for _, key := range []string{
		"1x2304x768 nt",      // TTT-125m / GPT-2 QKV, one token
		"8192x6144x4096 nt",  // Llama-3-8B GQA QKV: 4096 + 2·1024
		"2048x28672x4096 nt", // Llama-3-8B gate and up fused
		"512x4096x11008 nt",  // Llama-2-7B down
		"16x3072x768 nt",     // GPT-2 up, not gated
	} {
		if !seen[key] {
			t.Errorf("llm suite lacks %s", key)
		}
	}
}

func TestRandomSuite(t *testing.T) {
	a, again, b := expand(t, "random:5:1"), expand(t, "random:5:1"), expand(t, "random:5:2")
	if len(a) != 5 || !reflect.DeepEqual(a, again) {
		t.Errorf("random:5:1 is %v then %v: want the same 5 shapes", a, again)
	}
	if reflect.DeepEqual(a, b) {
		t.Error("random:5:1 and random:5:2 give the same shapes")
	}
	distinct := map[string]bool{}
	for _, s := range expand(t, "random:200:3") {
		for _, d := range []string{"m", "n", "k"} {
			v := resolveInt(t, s[d])
			if v%16 != 0 || v < 16 || v > 8192 {
				t.Fatalf("random %s = %d: want a multiple of 16 in [16, 8192]", d, v)
			}
			distinct[s[d]] = true
		}
	}
	if len(distinct) < 50 {
		t.Errorf("only %d distinct sizes in 600 draws", len(distinct))
	}
	for _, bad := range []string{"random:", "random:5", "random:0:1", "random:x:1", "random:5:y", "random:5:1:2"} {
		if _, err := (Workload{}).Suite(bad); err == nil || !strings.Contains(err.Error(), "random:N:SEED") {
			t.Errorf("Suite(%q) err = %v, want one naming random:N:SEED", bad, err)
		}
	}
}

func resolveInt(t *testing.T, s string) int {
	t.Helper()
	cfg := resolve(t, map[string]string{"m": s})
	return cfg.Int("m")
}

func TestCSVSuite(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body string
		want       []map[string]string
		wantErr    []string
	}{
		{"header", "m,n,k\n64,128,256\n 32, 32,32\n", []map[string]string{
			{"m": "64", "n": "128", "k": "256"}, {"m": "32", "n": "32", "k": "32"}}, nil},
		{"batch column and comments", "# shapes\n16,16,16,4\n\n8,8,8\n", []map[string]string{
			{"m": "16", "n": "16", "k": "16", "batch": "4"}, {"m": "8", "n": "8", "k": "8"}}, nil},
		{"bad value", "m,n,k\n64,64,64\n64,0,64\n", nil, []string{":3:", "--n", `"0"`}},
		{"wrong field count", "1,2\n", nil, []string{":1:", "2 fields"}},
		{"second header", "m,n,k\nm,n,k\n", nil, []string{":2:", "--m"}},
		{"empty", "m,n,k\n", nil, []string{"no shapes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Workload{}.Suite(path)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("accepted: %v", got)
				}
				for _, s := range append(tc.wantErr, path) {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if !maps.Equal(got[i], tc.want[i]) {
					t.Errorf("row %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
	_, err := Workload{}.Suite(filepath.Join(dir, "missing.csv"))
	if err == nil || !strings.Contains(err.Error(), "square, llm, random:N:SEED") {
		t.Errorf("a missing file gives %v, want an error listing the suites", err)
	}
}
