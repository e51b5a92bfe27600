package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/verify"
)

// TestVerifyFoundBeside: records in a verify/ folder beside the results
// (results/x/sweep and results/x/verify, as the scripts keep them) are
// read by Load without being asked for, and count; naming the same
// folder with --verify reads nothing twice; a folder without records is
// still an error; a verify/ folder inside the results is read once. The
// same holds when the root is a packed campaign, read by its folders' old
// paths or by paths into its archive.
func TestVerifyFoundBeside(t *testing.T) {
	tests := []struct {
		name      string
		verifyDir string // relative to the root; the results are in root/sweep
		wantDirs  int
		packed    string // "": folders; "old": packed, read by the old paths; "archive": by paths into the archive
	}{
		{"beside", "verify", 1, ""},
		{"inside", filepath.Join("sweep", "verify"), 1, ""},
		{"none", "", 0, ""},
		{"beside packed", "verify", 1, "old"},
		{"beside in archive", "verify", 1, "archive"},
		{"inside in archive", filepath.Join("sweep", "verify"), 1, "archive"},
		{"none in archive", "", 0, "archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			results := filepath.Join(root, "sweep")
			if err := sweeptest.Write(results, sweeptest.Sweep("run-1")); err != nil {
				t.Fatal(err)
			}
			if tt.verifyDir != "" {
				rows := []verify.Row{{Backend: "pytorch", Dtype: "float32", Verdict: verify.Pass}}
				if err := sweeptest.WriteVerify(filepath.Join(root, tt.verifyDir), "v", sweeptest.Config("tiny", "linear", false, 512), rows); err != nil {
					t.Fatal(err)
				}
			}
			base := root
			if tt.packed != "" {
				if _, err := store.Pack(root, store.CampaignArchive(root), func(string) bool { return true }); err != nil {
					t.Fatal(err)
				}
				for _, d := range []string{"sweep", "verify"} {
					if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
						t.Fatal(err)
					}
				}
				if tt.packed == "archive" {
					base = store.CampaignArchive(root)
				}
			}
			results = filepath.Join(base, "sweep")
			r, err := Load(results, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.VerifyDirs) != tt.wantDirs || len(r.Verify) != tt.wantDirs {
				t.Fatalf("records %d from %q, want %d", len(r.Verify), r.VerifyDirs, tt.wantDirs)
			}
			correct := 0
			for _, f := range r.FastP() {
				correct += f.Counts[0]
			}
			if (correct > 0) != (tt.wantDirs > 0) {
				t.Errorf("%d results counted correct with %d verify records", correct, len(r.Verify))
			}
			if tt.verifyDir != "" {
				if err := r.AddVerify(filepath.Join(base, tt.verifyDir)); err != nil {
					t.Errorf("--verify of the folder already read: %v", err)
				}
				if len(r.Verify) != 1 {
					t.Errorf("%d records after reading the folder twice, want 1", len(r.Verify))
				}
			}
			empty := filepath.Join(root, "empty")
			if err := os.MkdirAll(empty, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := r.AddVerify(empty); err == nil {
				t.Error("--verify of a folder without records: no error")
			}
		})
	}
}

// TestCandidateGateCountsAsVerification: a problem result whose backend
// recorded that its own gate passed (the candidates backend) is verified
// without a verify record; the same setting on another workload, or a
// result that failed, is not; a problem result without it is not.
func TestCandidateGateCountsAsVerification(t *testing.T) {
	problem := result.Config{Workload: "problem", Phase: "forward", Params: map[string]string{"level": "1", "problem": "1"}}
	gemmCfg := result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"m": "8", "n": "8", "k": "8", "dtype": "float32"}}
	gate := map[string]string{GateSetting: GatePass}
	for _, tt := range []struct {
		name     string
		res      result.Result
		verified bool
	}{
		{"gated candidate", result.Result{Backend: "candidates", Status: result.StatusOK, Config: problem, Env: result.Env{Settings: gate}}, true},
		{"no gate", result.Result{Backend: "pytorch", Status: result.StatusOK, Config: problem}, false},
		{"gate claimed off the problem workload", result.Result{Backend: "x", Status: result.StatusOK, Config: gemmCfg, Env: result.Env{Settings: gate}}, false},
		{"failed", result.Result{Backend: "candidates", Status: result.StatusFailed, Config: problem, Env: result.Env{Settings: gate}}, false},
	} {
		r := &Report{}
		verdict, _, ok := r.verdictOf(tt.res)
		if got := ok && verdict == verify.Pass; got != tt.verified {
			t.Errorf("%s: verified %v (verdict %q, ok %v), want %v", tt.name, got, verdict, ok, tt.verified)
		}
	}
}
