package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MaxArchiveBytes caps the uncompressed size of an archive's members:
// the committed campaigns are a few MB each, and gzip compresses a run of
// zeros a thousandfold, so a small file could otherwise expand until
// memory (or the time to skip through it) is gone.
const MaxArchiveBytes = 512 << 20

// OpenArchive reads a .tar.gz results archive into memory as a read-only
// fs.FS. Regular members of at most MaxFileBytes are held; a larger one
// is listed with its size and refused when read, as a large file in a
// folder is; links, devices and FIFOs are listed with their type and
// refused when read. A member that names a path outside the archive, or
// regular members adding up to more than MaxArchiveBytes, refuse the
// archive.
//
// An archive is read once per process and kept (keyed by its path, size
// and modification time): a report opens one campaign for its results,
// the verify records beside them and a calibration.
func OpenArchive(p string) (fs.FS, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", p, err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", p, st.Size(), st.ModTime().UnixNano())
	opened.Lock()
	defer opened.Unlock()
	if m, ok := opened.m[key]; ok {
		return m, nil
	}
	m, err := openArchive(p, MaxFileBytes, MaxArchiveBytes)
	if err != nil {
		return nil, err
	}
	opened.m[key] = m
	return m, nil
}

var opened = struct {
	sync.Mutex
	m map[string]*memFS
}{m: map[string]*memFS{}}

func openArchive(p string, perFile, total int64) (*memFS, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", p, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("open archive %s: not a regular file", p)
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", p, err)
	}
	m := &memFS{entries: map[string]*memEntry{".": {name: ".", mode: fs.ModeDir | 0o555}}}
	tr := tar.NewReader(gz)
	var held int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read archive %s: %w", p, err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if !fs.ValidPath(name) {
			return nil, fmt.Errorf("archive %s: member %q is not a relative path inside the archive", p, h.Name)
		}
		e := &memEntry{name: path.Base(name), mode: h.FileInfo().Mode(), size: h.Size, mod: h.ModTime}
		switch h.Typeflag {
		case tar.TypeDir:
			m.addDir(name)
			continue
		case tar.TypeReg:
			// Every member counts, read or not: skipping one still
			// decompresses it, so the cap bounds the work as well as
			// the memory.
			if held += h.Size; held > total {
				return nil, fmt.Errorf("archive %s: members add up to more than %d bytes uncompressed (at member %s): refused, as a decompression bomb could be", p, total, name)
			}
			if h.Size <= perFile {
				if e.data, err = io.ReadAll(tr); err != nil {
					return nil, fmt.Errorf("read archive %s: member %s: %w", p, name, err)
				}
			}
		default:
			e.size = 0 // not read: Tree.Read refuses it by its type
		}
		if name == "." {
			return nil, fmt.Errorf("archive %s: member %q is the archive's root but not a folder", p, h.Name)
		}
		m.addDir(path.Dir(name))
		parent := m.entries[path.Dir(name)]
		if old, dup := m.entries[name]; dup && old.mode.IsDir() {
			return nil, fmt.Errorf("archive %s: member %s is both a folder and a file", p, name)
		} else if !dup {
			parent.children = append(parent.children, name)
		}
		m.entries[name] = e
	}
	return m, nil
}

// memFS is an archive's members, by slash-separated name ("." the root).
type memFS struct {
	entries map[string]*memEntry
}

type memEntry struct {
	name     string
	mode     fs.FileMode
	size     int64
	mod      time.Time
	data     []byte
	children []string // full names, of a folder
}

// addDir adds folder name and those above it, tarballs may omit them.
func (m *memFS) addDir(name string) {
	if _, ok := m.entries[name]; ok || name == "." {
		return
	}
	parent := path.Dir(name)
	m.addDir(parent)
	m.entries[name] = &memEntry{name: path.Base(name), mode: fs.ModeDir | 0o555}
	m.entries[parent].children = append(m.entries[parent].children, name)
}

func (m *memFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	e, ok := m.entries[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if e.mode.IsDir() {
		return &memDir{fs: m, e: e}, nil
	}
	return &memFile{e: e, r: bytes.NewReader(e.data)}, nil
}

func (e *memEntry) Name() string       { return e.name }
func (e *memEntry) Size() int64        { return e.size }
func (e *memEntry) Mode() fs.FileMode  { return e.mode }
func (e *memEntry) ModTime() time.Time { return e.mod }
func (e *memEntry) IsDir() bool        { return e.mode.IsDir() }
func (e *memEntry) Sys() any           { return nil }

type memFile struct {
	e *memEntry
	r *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.e, nil }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Read(b []byte) (int, error) {
	if !f.e.mode.IsRegular() || f.e.data == nil && f.e.size > 0 {
		return 0, &fs.PathError{Op: "read", Path: f.e.name, Err: fmt.Errorf("%s of %d bytes, not read", kindOf(f.e.mode), f.e.size)}
	}
	return f.r.Read(b)
}

type memDir struct {
	fs   *memFS
	e    *memEntry
	next int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.e, nil }
func (d *memDir) Close() error               { return nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.e.name, Err: errors.New("is a folder")}
}

// ReadDir lists the folder sorted by name, as fs.ReadDirFile asks.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	names := slices.Sorted(slices.Values(d.e.children))
	rest := names[min(d.next, len(names)):]
	if n > 0 {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		rest = rest[:min(n, len(rest))]
	}
	out := make([]fs.DirEntry, len(rest))
	for i, name := range rest {
		out[i] = fs.FileInfoToDirEntry(d.fs.entries[name])
	}
	d.next += len(rest)
	return out, nil
}
