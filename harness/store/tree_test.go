package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// writeTarGz writes members (name -> content; a content of "->target"
// makes a symbolic link) into a .tar.gz at p, in the order given.
func writeTarGz(t *testing.T, p string, members [][2]string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		h := &tar.Header{Name: m[0], Mode: 0o644, Size: int64(len(m[1])), Typeflag: tar.TypeReg}
		if target, ok := strings.CutPrefix(m[1], "->"); ok {
			h = &tar.Header{Name: m[0], Mode: 0o777, Linkname: target, Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(m[1])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func resultJSON(t *testing.T, runID, backend string) string {
	t.Helper()
	raw, err := json.Marshal(tinyResult(runID, backend))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestReadAllArchiveAsFolder: a folder and its packed archive read the
// same results by every path that names them, and a packed campaign
// folder is still read by the paths that named its subfolders.
func TestReadAllArchiveAsFolder(t *testing.T) {
	root := t.TempDir()
	camp := filepath.Join(root, "camp")
	for _, r := range []struct{ run, backend string }{{"sweep", "a"}, {"sweep", "b"}, {"other", "a"}} {
		if _, err := WriteResult(camp, tinyResult(r.run, r.backend)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(camp, "README.md"), []byte("# camp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(root, "packed")
	if err := os.Mkdir(packed, 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := Pack(camp, CampaignArchive(packed), func(rel string) bool { return rel != "README.md" })
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 3 {
		t.Fatalf("Pack packed %v, want the 3 results and not the README", names)
	}
	// A file kept plain (a _plan.json a doc links to) leaves its folder on
	// disk: the folder is still read from the archive.
	if err := os.MkdirAll(filepath.Join(packed, "sweep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(packed, "sweep", "_plan.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		folder, archive string
		want            int
	}{
		{camp, CampaignArchive(packed), 3},
		{filepath.Join(camp, "sweep"), filepath.Join(CampaignArchive(packed), "sweep"), 2},
		{filepath.Join(camp, "sweep"), filepath.Join(packed, "sweep"), 2}, // the packed campaign folder's old path
		{filepath.Join(camp, "other"), filepath.Join(packed, "other") + "/", 1},
	}
	for _, tt := range tests {
		want, wskip, err := ReadAll(tt.folder)
		if err != nil || len(wskip) > 0 || len(want) != tt.want {
			t.Fatalf("ReadAll(%s) = %d results, %v, %v; want %d", tt.folder, len(want), wskip, err, tt.want)
		}
		got, gskip, err := ReadAll(tt.archive)
		if err != nil || len(gskip) > 0 {
			t.Fatalf("ReadAll(%s): %v, %v", tt.archive, gskip, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ReadAll(%s) = %+v, want the folder's %+v", tt.archive, got, want)
		}
	}
	// One file by path, inside the archive and inside the packed folder.
	for _, p := range []string{filepath.Join(CampaignArchive(packed), "other", names[0][len("other/"):]), filepath.Join(packed, names[0])} {
		if r, err := ReadFile(p); err != nil || r.RunID != "other" {
			t.Errorf("ReadFile(%s) = %+v, %v; want the run other's result", p, r.RunID, err)
		}
	}
	// A message about a member names the archive, also when the tree was
	// opened by the packed folder's old path, which names none.
	tr, err := OpenTree(filepath.Join(packed, "sweep"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Read("nope.json", MaxFileBytes); err == nil || !strings.Contains(err.Error(), "(member sweep/nope.json of archive "+CampaignArchive(packed)+")") {
		t.Errorf("Read of a missing member: %v, want it to name the member and the archive", err)
	}
	// Writing into a packed campaign is refused: the readers would not see it.
	for _, d := range []string{packed, filepath.Join(packed, "sweep"), filepath.Join(packed, "new-run")} {
		if _, err := WriteResult(d, tinyResult("late", "a")); err == nil || !strings.Contains(err.Error(), "is in a packed campaign, read from "+CampaignArchive(packed)) {
			t.Errorf("WriteResult into %s: %v, want a refusal naming the archive", d, err)
		}
	}
	again := filepath.Join(root, "again.tar.gz")
	if _, err := Pack(camp, again, func(rel string) bool { return rel != "README.md" }); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(CampaignArchive(packed))
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("packing the same files twice gave different archives; git would store both")
	}
}

// TestArchiveRules: an archive is read by a folder's rules (regular files
// only, the per-file cap), a path that leaves it or a total above the cap
// refuses it, and every message names the archive and the member.
func TestArchiveRules(t *testing.T) {
	dir := t.TempDir()
	ok := resultJSON(t, "r", "a")
	tests := []struct {
		name     string
		members  [][2]string
		perFile  int64
		total    int64
		wantErr  string   // openArchive's error
		wantSkip []string // what ReadAll skips, each naming archive and member
		wantRead int
	}{
		{name: "fine", members: [][2]string{{"r/a.json", ok}, {"./r/b.json", ok}}, perFile: 1 << 20, total: 1 << 20, wantRead: 2},
		{name: "link", members: [][2]string{{"r/a.json", ok}, {"r/l.json", "->a.json"}}, perFile: 1 << 20, total: 1 << 20, wantRead: 1,
			wantSkip: []string{"link.tar.gz/r/l.json (member r/l.json of archive " + filepath.Join(dir, "link.tar.gz") + ") is not a regular file (a symbolic link)"}},
		{name: "big", members: [][2]string{{"r/a.json", ok}, {"r/big.json", ok + strings.Repeat(" ", 100)}}, perFile: int64(len(ok)), total: 1 << 20, wantRead: 1,
			wantSkip: []string{"big.tar.gz/r/big.json (member r/big.json of archive " + filepath.Join(dir, "big.tar.gz") + ") is " + strconv.Itoa(len(ok)+100) + " bytes, above the " + strconv.Itoa(len(ok))}},
		{name: "bomb", members: [][2]string{{"r/a.json", ok}, {"r/b.json", ok}}, perFile: 1 << 20, total: int64(len(ok)) + 10,
			wantErr: "bomb.tar.gz: members add up to more than " + strconv.Itoa(len(ok)+10) + " bytes uncompressed (at member r/b.json)"},
		// A member above the per-file cap is not held, but counts: skipping it is work too.
		{name: "big bomb", members: [][2]string{{"r/a.json", ok}, {"r/big.json", ok + strings.Repeat(" ", 100)}}, perFile: int64(len(ok)), total: int64(len(ok)) + 50,
			wantErr: "members add up to more than " + strconv.Itoa(len(ok)+50) + " bytes uncompressed (at member r/big.json)"},
		// A real bomb: 8 MiB of zeros packs into a few KiB.
		{name: "zeros", members: [][2]string{{"r/zero.json", strings.Repeat("\x00", 8<<20)}}, perFile: 64 << 20, total: 1 << 20,
			wantErr: "members add up to more than 1048576 bytes uncompressed (at member r/zero.json)"},
		{name: "escape", members: [][2]string{{"../evil.json", ok}}, perFile: 1 << 20, total: 1 << 20,
			wantErr: `escape.tar.gz: member "../evil.json" is not a relative path inside the archive`},
		{name: "absolute", members: [][2]string{{"/etc/evil.json", ok}}, perFile: 1 << 20, total: 1 << 20,
			wantErr: `absolute.tar.gz: member "/etc/evil.json" is not a relative path`},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name+".tar.gz")
		writeTarGz(t, p, tt.members)
		m, err := openArchive(p, tt.perFile, tt.total)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: openArchive error %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// The per-file cap of a Tree's reader is MaxFileBytes; give the
		// test's own to the members through a tree over m.
		rs, skipped, err := Tree{FS: m, Name: p, archive: p, member: "."}.readAll(tt.perFile)
		if err != nil || len(rs) != tt.wantRead || len(skipped) != len(tt.wantSkip) {
			t.Fatalf("%s: read %d, skipped %v, %v; want %d read, %d skipped", tt.name, len(rs), skipped, err, tt.wantRead, len(tt.wantSkip))
		}
		for i, w := range tt.wantSkip {
			if !strings.Contains(skipped[i], w) {
				t.Errorf("%s: skipped %q, want it to contain %q", tt.name, skipped[i], w)
			}
		}
	}
}

func TestOpenTreeRefuses(t *testing.T) {
	dir := t.TempDir()
	notArchive := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notArchive, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "a.tar.gz")
	writeTarGz(t, archive, [][2]string{{"sweep/x.json", "{}"}})
	corrupt := filepath.Join(dir, "c.tgz")
	if err := os.WriteFile(corrupt, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "does not exist"},
		{notArchive, "is not a results folder or archive (.tar.gz, .tgz): " + notArchive + " is a regular file"},
		{filepath.Join(archive, "nope"), "archive " + archive + " has no member nope"},
		{filepath.Join(archive, "sweep", "x.json"), "member sweep/x.json of archive " + archive + " is not a folder"},
		{corrupt, "open archive " + corrupt + ": "},
		{filepath.Join(dir, "sweep"), "does not exist (nor does an archive or a packed campaign folder that holds it)"},
	}
	for _, tt := range tests {
		if _, err := OpenTree(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("OpenTree(%s) error %v, want one containing %q", tt.path, err, tt.want)
		}
		if IsTree(tt.path) {
			t.Errorf("IsTree(%s) = true, want false", tt.path)
		}
	}
}
