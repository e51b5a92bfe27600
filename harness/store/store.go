// Package store writes and reads results on disk. Every write is atomic
// (temp file, fsync, rename, fsync of the folder), so a crash leaves either
// the old file or the new one, never half of one.
package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/workload"
)

// safeName is s with every run of bytes outside [A-Za-z0-9._+-] replaced
// by one "-" (what the regular expression [^A-Za-z0-9._+-]+ did: every
// byte of a multi-byte character is outside the set too). A loop: Key
// runs for every result a reader touches.
func safeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inRun := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '+' || c == '-' {
			b.WriteByte(c)
			inRun = false
		} else if !inRun {
			b.WriteByte('-')
			inRun = true
		}
	}
	return b.String()
}

// Key names a result's file: backend, workload, phase and every parameter
// value in the workload's order, filesystem-safe. A value that is an
// absolute path (the problem workload's folder) is its base name and a
// short hash of the whole path (PathPart): the name says which folder
// without carrying a user's home into every file name, and two folders of
// one base name stay apart. Names written before (the path spelt out) are
// still read: readers go by the stored configuration, not the name.
func Key(backendName string, c result.Config) string {
	parts := []string{backendName + "_", c.Workload, c.Phase}
	for _, k := range workload.OrderedKeys(c) {
		v := c.Params[k]
		if filepath.IsAbs(v) {
			v = PathPart(v)
		}
		parts = append(parts, v)
	}
	k := strings.Join(parts, "_")
	return safeName(strings.ReplaceAll(k, "/", "+"))
}

// PathPart is an absolute path as a part of a key: "<base>-<8 hex digits
// of its SHA-256>" (KernelBench-1a2b3c4d).
func PathPart(abs string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return filepath.Base(abs) + "-" + hex.EncodeToString(sum[:4])
}

// WriteResult stores r under dir/<run_id>/<key>.json and returns the path.
func WriteResult(dir string, r result.Result) (string, error) {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode result of %s: %w", r.Backend, err)
	}
	path := filepath.Join(dir, safeName(r.RunID), Key(r.Backend, r.Config)+".json")
	return path, WriteFileAtomic(path, append(raw, '\n'))
}

// WriteFileAtomic writes data to path through a temp file in the same
// folder. A folder inside a packed campaign is refused: its readers read
// the archive (OpenTree), so a result written beside it would be ignored
// without a word.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if archive, _, err := locate(dir); err == nil && archive != "" {
		return fmt.Errorf("write %s: the folder is in a packed campaign, read from %s, where a new file would be ignored: write into another folder", path, archive)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// ReadAll loads every result JSON below dir (recursively), sorted by path;
// dir is a folder or an archive (OpenTree). A file that is not a valid
// result is skipped and named in skipped with the reason, so one bad file
// never poisons a folder; only a tree that cannot be opened or walked is
// an error.
func ReadAll(dir string) (rs []result.Result, skipped []string, err error) {
	t, err := OpenTree(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read results in %s: %w", dir, err)
	}
	return t.ReadAll()
}

// ReadAll is the package's ReadAll on an opened tree.
func (t Tree) ReadAll() (rs []result.Result, skipped []string, err error) {
	return t.readAll(MaxFileBytes)
}

func (t Tree) readAll(limit int64) (rs []result.Result, skipped []string, err error) {
	var names []string
	err = fs.WalkDir(t.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if !d.IsDir() && strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read results in %s: %w", t.Name, err)
	}
	sort.Strings(names)
	rs = make([]result.Result, 0, len(names))
	for _, n := range names {
		raw, err := t.Read(n, limit)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("read result %s: %v", t.Path(n), err))
			continue
		}
		r, err := decodeResult(t.Path(n), raw)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		rs = append(rs, r)
	}
	return rs, skipped, nil
}

// ReadFile loads one stored result of any supported schema version (path
// may lie in an archive, ReadPath) and recomputes what is derived from its
// samples (Summarize), so what a file stores in stats or throughput is
// never what a reader shows.
func ReadFile(path string) (result.Result, error) {
	raw, err := ReadPath(path, MaxFileBytes)
	if err != nil {
		return result.Result{}, fmt.Errorf("read result %s: %w", path, err)
	}
	return decodeResult(path, raw)
}

func decodeResult(path string, raw []byte) (result.Result, error) {
	r, err := result.Decode(raw)
	if err != nil {
		return result.Result{}, fmt.Errorf("result %s: %w", path, err)
	}
	if r, err = Summarize(r); err != nil {
		return result.Result{}, fmt.Errorf("result %s: %w", path, err)
	}
	return r, nil
}

// Summarize replaces a read result's statistics and throughput by those of
// its samples, computed by stats.Summarize and workload.ThroughputOf, the
// functions the run used: a file whose stats were edited, or written by a
// buggy tool, cannot show a false median in export, report, history or
// compare. An ok result whose samples fail stats.Check (none, negative, not
// finite) is an error; other statuses carry no statistics.
func Summarize(r result.Result) (result.Result, error) {
	r.Stats, r.Throughput, r.ThroughputUnit = nil, 0, ""
	if r.Status != result.StatusOK {
		return r, nil
	}
	st, err := stats.Summarize(r.SamplesMs)
	if err != nil {
		return r, fmt.Errorf("status ok but its samples_ms cannot be trusted: %w", err)
	}
	r.Stats = &st
	tp := workload.ThroughputOf(r.Config, st.MedianMs)
	if math.IsNaN(tp.Value) || math.IsInf(tp.Value, 0) || tp.Value < 0 {
		return r, fmt.Errorf("status ok but its throughput %v %s is not a finite non-negative number", tp.Value, tp.Unit)
	}
	r.Throughput, r.ThroughputUnit = tp.Value, tp.Unit
	return r, nil
}
