package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
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
