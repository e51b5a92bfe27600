// Package store writes and reads results on disk. Every write is atomic
// (temp file, fsync, rename, fsync of the folder), so a crash leaves either
// the old file or the new one, never half of one.
package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._+-]+`)

// Key names a result's file: backend, workload, phase and every parameter
// value in the workload's order, filesystem-safe.
func Key(backendName string, c result.Config) string {
	parts := []string{backendName + "_", c.Workload, c.Phase}
	for _, k := range workload.OrderedKeys(c) {
		parts = append(parts, c.Params[k])
	}
	k := strings.Join(parts, "_")
	return unsafe.ReplaceAllString(strings.ReplaceAll(k, "/", "+"), "-")
}

// WriteResult stores r under dir/<run_id>/<key>.json and returns the path.
func WriteResult(dir string, r result.Result) (string, error) {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode result of %s: %w", r.Backend, err)
	}
	path := filepath.Join(dir, unsafe.ReplaceAllString(r.RunID, "-"), Key(r.Backend, r.Config)+".json")
	return path, WriteFileAtomic(path, append(raw, '\n'))
}

// WriteFileAtomic writes data to path through a temp file in the same folder.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
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

// ReadAll loads every result JSON below dir (recursively), sorted by path.
// A file that is not a valid result is skipped and named in skipped with
// the reason, so one bad file never poisons a folder; only a folder that
// cannot be walked is an error.
func ReadAll(dir string) (rs []result.Result, skipped []string, err error) {
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if !d.IsDir() && strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read results in %s: %w", dir, err)
	}
	sort.Strings(paths)
	rs = make([]result.Result, 0, len(paths))
	for _, p := range paths {
		r, err := ReadFile(p)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		rs = append(rs, r)
	}
	return rs, skipped, nil
}

// ReadFile loads one stored result of any supported schema version.
func ReadFile(path string) (result.Result, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return result.Result{}, fmt.Errorf("read result %s: %w", path, err)
	}
	r, err := result.Decode(raw)
	if err != nil {
		return result.Result{}, fmt.Errorf("result %s: %w", path, err)
	}
	return r, nil
}
