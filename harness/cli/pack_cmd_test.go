package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/store"
)

// copyTree copies the regular files below src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadersSameFromArchive: report, history, export and compare print
// the same from a campaign folder, from its archive, and from the packed
// folder's old paths, the path of the source aside.
func TestReadersSameFromArchive(t *testing.T) {
	root := t.TempDir()
	folder := filepath.Join(root, "camp")
	a := smallSweep("run-a")
	writeRun(t, folder, a)
	writeRun(t, folder, sweeptest.Scaled(a, 1.3, "run-slow"))
	if err := os.WriteFile(filepath.Join(folder, "README.md"), []byte("# camp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "camp.log"), []byte("log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(root, "packed", "camp")
	copyTree(t, folder, packed)
	out, _, code, err := runApp(t, "pack", "--keep", "*.log", packed)
	if code != 0 || !strings.Contains(out, "kept 2 of them plain beside it: README.md, camp.log") {
		t.Fatalf("pack: exit %d, %v, %q", code, err, out)
	}
	left, _ := os.ReadDir(packed)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if want := []string{"README.md", "camp.log", "camp.tar.gz"}; !slices.Equal(names, want) {
		t.Errorf("after pack the folder holds %v, want %v", names, want)
	}
	archive := store.CampaignArchive(packed)
	for _, src := range []string{archive, packed} { // the archive, and the packed folder's old paths
		same := func(what string, got, want string) {
			t.Helper()
			if strings.ReplaceAll(got, src, folder) != want {
				t.Errorf("%s from %s differs from the folder's:\n%s\nwant\n%s", what, src, got, want)
			}
		}
		run := func(args ...string) string {
			t.Helper()
			out, stderr, code, err := runApp(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %v %s", args, code, err, stderr)
			}
			return out
		}
		side := func(base string) []string { // slow first: faster is no regression, exit 0
			return []string{filepath.Join(base, "run-slow"), filepath.Join(base, "run-a")}
		}
		same("export", run("export", "--results", src, "--format", "csv"), run("export", "--results", folder, "--format", "csv"))
		same("export RUN_ID", run("export", "--results", src, "--format", "benchfmt", "run-slow"), run("export", "--results", folder, "--format", "benchfmt", "run-slow"))
		same("compare", run(append([]string{"compare"}, side(src)...)...), run(append([]string{"compare"}, side(folder)...)...))
		same("history", run(append([]string{"history", "--csv", "-"}, side(src)...)...), run(append([]string{"history", "--csv", "-"}, side(folder)...)...))
		html := func(results string) string {
			t.Helper()
			p := filepath.Join(t.TempDir(), "report.html")
			run("report", "--results", results, "--out", p)
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return string(raw)
		}
		same("report", html(src), html(folder))
	}
}

func TestPackRefuses(t *testing.T) {
	root := t.TempDir()
	folder := filepath.Join(root, "camp")
	writeRun(t, folder, smallSweep("run-a"))
	if _, _, code, err := runApp(t, "pack", folder); code != 0 {
		t.Fatalf("pack: exit %d: %v", code, err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pack", folder}, "is already packed: " + store.CampaignArchive(folder) + " exists"},
		{[]string{"pack", filepath.Join(root, "nope")}, `folder "` + filepath.Join(root, "nope") + `" is not a folder (allowed:`},
		{[]string{"pack", "--keep", "[", root}, `--keep "[" is not a valid pattern (allowed:`},
		{[]string{"pack"}, "takes 1 arguments (FOLDER), got 0"},
	}
	for _, tt := range tests {
		_, _, code, err := runApp(t, tt.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", tt.args, code, err, tt.want)
		}
	}
}
