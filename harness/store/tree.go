package store

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A Tree is a results folder as its readers see it: a folder on disk, or
// a .tar.gz archive (a packed campaign) read as the folder it holds. Every
// reader of results (ReadAll, the report's sidecars, verify records and
// calibrations) walks a Tree, so a folder and its archive are read by the
// same rules: regular files only, MaxFileBytes per file.
type Tree struct {
	// FS walks the tree; names in it are slash-separated and relative.
	FS fs.FS
	// Name is how messages and the report name the tree's root: the
	// path it was opened by (a folder, "x.tar.gz" or "x.tar.gz/sub").
	Name string
	// dir is the folder on disk, "" for an archive: a folder's files are
	// read through ReadRegular (non-blocking, type checked on the opened
	// file), not through os.DirFS, which would block on a FIFO.
	dir string
	// archive and member say where an archive's tree lies, for messages:
	// the archive file and the folder in it ("." for its root).
	archive, member string
}

// ArchiveExts are the names of a packed results archive (gzip'd tar).
var ArchiveExts = []string{".tar.gz", ".tgz"}

// IsArchiveName says whether name ends like a results archive.
func IsArchiveName(name string) bool {
	for _, e := range ArchiveExts {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}

// CampaignArchive is where a packed campaign folder keeps its data:
// results/<campaign>/<campaign>.tar.gz, members relative to the folder,
// the README beside it.
func CampaignArchive(folder string) string {
	return filepath.Join(folder, filepath.Base(filepath.Clean(folder))+".tar.gz")
}

// OpenTree opens p as a results tree. p is:
//   - an archive, or a folder inside one ("x.tar.gz/sweep");
//   - a packed campaign folder (one holding its CampaignArchive) or a
//     path into one, on disk or no longer ("results/h100-attention/sweep"
//     where results/h100-attention holds h100-attention.tar.gz with
//     sweep/ in it): read from the archive, so the paths docs and READMEs
//     cite keep working and print the same; plain files kept beside the
//     archive are copies, for links;
//   - else a folder on disk.
//
// The error says which of them p is not.
func OpenTree(p string) (Tree, error) {
	archive, member, err := locate(p)
	if err != nil {
		return Tree{}, err
	}
	if archive == "" {
		return Tree{FS: os.DirFS(p), Name: p, dir: p}, nil
	}
	a, err := OpenArchive(archive)
	if err != nil {
		return Tree{}, err
	}
	if member == "." {
		return Tree{FS: a, Name: p, archive: archive, member: member}, nil
	}
	st, err := fs.Stat(a, member)
	if err != nil {
		return Tree{}, fmt.Errorf("open results %s: archive %s has no member %s", p, archive, member)
	}
	if !st.IsDir() {
		return Tree{}, fmt.Errorf("open results %s: member %s of archive %s is not a folder", p, member, archive)
	}
	sub, err := fs.Sub(a, member)
	if err != nil {
		return Tree{}, fmt.Errorf("open results %s: %w", p, err)
	}
	return Tree{FS: sub, Name: p, archive: archive, member: member}, nil
}

// IsTree says whether p opens as a results tree (OpenTree).
func IsTree(p string) bool {
	_, err := OpenTree(p)
	return err == nil
}

// locate finds the archive that holds p and p's member path in it ("."
// for the archive itself): the nearest of p and its ancestors that is an
// archive file or a folder holding its campaign archive. archive is ""
// when p is a folder on disk that no archive holds.
func locate(p string) (archive, member string, err error) {
	clean := filepath.Clean(p)
	isDir := false
	for cur, rest := clean, ""; ; {
		if st, err := os.Stat(cur); err == nil {
			switch {
			case st.Mode().IsRegular() && IsArchiveName(cur):
				return cur, memberPath(rest), nil
			case st.IsDir() && isRegular(CampaignArchive(cur)): // a packed campaign, or a path into one
				return CampaignArchive(cur), memberPath(rest), nil
			case st.IsDir():
				isDir = isDir || cur == clean
			default:
				return "", "", fmt.Errorf("%s is not a results folder or archive (%s): %s is %s", p, strings.Join(ArchiveExts, ", "), cur, kindOf(st.Mode()))
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		rest = path.Join(filepath.ToSlash(filepath.Base(cur)), rest)
		cur = parent
	}
	if isDir {
		return "", "", nil
	}
	return "", "", fmt.Errorf("%s does not exist (nor does an archive or a packed campaign folder that holds it)", p)
}

func memberPath(rest string) string {
	if rest == "" {
		return "."
	}
	return path.Clean(rest)
}

func isRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Path is how messages name the tree's member rel: the root's name
// joined with it ("results/x.tar.gz/sweep/a.json").
func (t Tree) Path(rel string) string {
	return filepath.Join(t.Name, filepath.FromSlash(rel))
}

// where names rel for a message: its path, and for an archive's member
// which member of which archive it is (the path may be a packed folder's
// old one, which names no archive).
func (t Tree) where(rel string) string {
	if t.archive == "" {
		return t.Path(rel)
	}
	return fmt.Sprintf("%s (member %s of archive %s)", t.Path(rel), path.Join(t.member, rel), t.archive)
}

// Read reads the tree's member rel, a regular file of at most limit bytes
// (ReadRegular's rules for a folder, the archive's for an archive).
func (t Tree) Read(rel string, limit int64) ([]byte, error) {
	if t.dir != "" {
		return ReadRegular(filepath.Join(t.dir, filepath.FromSlash(rel)), limit)
	}
	st, err := fs.Stat(t.FS, rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.where(rel), err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): only regular files are read", t.where(rel), kindOf(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, above the %d a results file may have", t.where(rel), st.Size(), limit)
	}
	raw, err := fs.ReadFile(t.FS, rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.where(rel), err)
	}
	return raw, nil
}

// ReadPath reads one file by path, which may lie in an archive or a
// packed campaign folder (a --calibration inside a packed campaign): the
// file itself when it is on disk, else the member of the tree its folder
// opens as.
func ReadPath(p string, limit int64) ([]byte, error) {
	if _, err := os.Lstat(p); err == nil {
		return ReadRegular(p, limit)
	}
	t, err := OpenTree(filepath.Dir(p))
	if err != nil {
		return ReadRegular(p, limit) // not in an archive either: the disk's own error
	}
	return t.Read(filepath.Base(p), limit)
}
