package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Lock keeps two sweeps from writing one folder. It is an flock, not a pid
// file: the kernel drops it when its holder dies, even by kill -9, so a
// rerun after a crash never finds a stale lock.
//
// A whole sweep takes .lock exclusively. Shard i of n takes .lock shared
// (shards of one sweep write disjoint cells and may run together) and
// .lock-shard-i-of-n exclusively (one process per shard).
type Lock struct {
	files    []*os.File
	recorded []*os.File // files holding this process's name, emptied on Release
}

// LockFolder takes the lock of dir for a whole sweep (count <= 1) or for one
// shard. It fails at once, naming the holder, rather than waiting.
func LockFolder(dir string, index, count int) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create sweep folder %s: %w", dir, err)
	}
	l := &Lock{}
	if count <= 1 {
		if err := l.take(filepath.Join(dir, ".lock"), syscall.LOCK_EX, true); err != nil {
			return nil, err
		}
		return l, nil
	}
	if err := l.take(filepath.Join(dir, ".lock"), syscall.LOCK_SH, false); err != nil {
		return nil, err
	}
	if err := l.take(filepath.Join(dir, fmt.Sprintf(".lock-shard-%d-of-%d", index, count)), syscall.LOCK_EX, true); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

func (l *Lock) take(path string, how int, record bool) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &BusyError{Path: path, Holder: holder(filepath.Dir(path))}
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if record {
		// Who holds it, for the message another sweep gets.
		host, _ := os.Hostname()
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))), 0)
		l.recorded = append(l.recorded, f)
	}
	l.files = append(l.files, f)
	return nil
}

// holder describes who holds the folder's locks, as far as their files say.
func holder(dir string) string {
	paths, _ := filepath.Glob(filepath.Join(dir, ".lock*"))
	var out []string
	for _, p := range paths {
		if raw, err := os.ReadFile(p); err == nil && len(raw) > 0 {
			out = append(out, filepath.Base(p)+": "+strings.TrimSpace(string(raw)))
		}
	}
	return strings.Join(out, "; ")
}

// Release drops the lock. The files stay, emptied, so a later busy message
// names only live holders (or one that was killed before it could release).
func (l *Lock) Release() {
	for _, f := range l.recorded {
		_ = f.Truncate(0)
	}
	for _, f := range l.files {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	l.files, l.recorded = nil, nil
}

// BusyError is a folder another sweep is writing.
type BusyError struct {
	Path, Holder string
}

func (e *BusyError) Error() string {
	msg := fmt.Sprintf("another sweep is writing this folder (lock %s is held)", e.Path)
	if e.Holder != "" {
		msg += ": " + e.Holder
	}
	return msg + "; wait for it to finish, or use another --results folder"
}
