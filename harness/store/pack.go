package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Pack writes the regular files below dir for which pack(rel) is true into
// a gzip'd tar at archive, members named relative to dir, and returns
// their names. The archive depends on the files' names and bytes only
// (sorted, no times, owners or modes beyond 0644), so packing the same
// data twice gives the same bytes and git stores it once. Anything below
// dir that is neither a folder nor a regular file (a link, a FIFO) is an
// error naming it: a campaign is packed whole or not at all. The archive
// is read back and compared before Pack returns, so a caller may delete
// what it packed.
func Pack(dir, archive string, pack func(rel string) bool) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || d.IsDir() || !pack(filepath.ToSlash(rel)) {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is %s: only regular files are packed", p, kindOf(d.Type()))
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("pack %s: no files to pack", dir)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, n := range names {
		data, err := ReadRegular(filepath.Join(dir, filepath.FromSlash(n)), MaxFileBytes)
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", dir, err)
		}
		h := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("pack %s: member %s: %w", dir, n, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("pack %s: member %s: %w", dir, n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if err := WriteFileAtomic(archive, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if err := checkPacked(dir, archive, names); err != nil {
		os.Remove(archive)
		return nil, err
	}
	return names, nil
}

// checkPacked reads archive back and compares every member with its file.
func checkPacked(dir, archive string, names []string) error {
	a, err := openArchive(archive, MaxFileBytes, MaxArchiveBytes)
	if err != nil {
		return fmt.Errorf("pack %s: read back: %w", dir, err)
	}
	for _, n := range names {
		got, err := fs.ReadFile(a, n)
		if err != nil {
			return fmt.Errorf("pack %s: read back member %s: %w", dir, n, err)
		}
		want, err := ReadRegular(filepath.Join(dir, filepath.FromSlash(n)), MaxFileBytes)
		if err != nil || !bytes.Equal(got, want) {
			return fmt.Errorf("pack %s: member %s of %s differs from its file", dir, n, archive)
		}
	}
	return nil
}
