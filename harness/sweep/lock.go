package sweep

// The locking itself is github.com/gofrs/flock (flock(2) with LOCK_NB, and
// the reopen-read-write retry NFSv4 needs, which matters for SLURM sweep
// folders on shared filesystems). What stays here is the sweep's policy:
// which files, shared or exclusive, and the holder note that makes a busy
// folder's message name who holds it.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Lock keeps two sweeps from writing one folder. It is an flock, not a pid
// file: the kernel drops it when its holder dies, even by kill -9, so a
// rerun after a crash never finds a stale lock.
//
// A whole sweep takes .lock exclusively. Shard i of n takes .lock shared
// (shards of one sweep write disjoint cells and may run together) and
// .lock-shard-i-of-n exclusively (one process per shard).
type Lock struct {
	held     []*flock.Flock
	recorded []string // lock files holding this process's note, emptied on Release
}

// LockFolder takes the lock of dir for a whole sweep (count <= 1) or for one
// shard. It fails at once, naming the holder, rather than waiting.
func LockFolder(dir string, index, count int) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create sweep folder %s: %w", dir, err)
	}
	l := &Lock{}
	if count <= 1 {
		if err := l.take(filepath.Join(dir, ".lock"), true); err != nil {
			return nil, err
		}
		return l, nil
	}
	if err := l.take(filepath.Join(dir, ".lock"), false); err != nil {
		return nil, err
	}
	if err := l.take(filepath.Join(dir, fmt.Sprintf(".lock-shard-%d-of-%d", index, count)), true); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// take locks path without waiting: exclusively (and then notes this process
// in the file, for the message another sweep gets) or shared.
func (l *Lock) take(path string, exclusive bool) error {
	// Read-write, so an exclusive lock also works where flock is emulated
	// by fcntl (NFS), which wants a writable descriptor.
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	try, how := fl.TryRLock, "shared"
	if exclusive {
		try, how = fl.TryLock, "exclusive"
	}
	ok, err := try()
	if err != nil {
		return fmt.Errorf("lock %s (%s): %w", path, how, err)
	}
	if !ok {
		return &BusyError{Path: path, Holder: holder(filepath.Dir(path))}
	}
	l.held = append(l.held, fl)
	if exclusive {
		host, _ := os.Hostname()
		note := fmt.Sprintf("pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
		// Best effort: a lock without its note still excludes; the busy
		// message just names no holder.
		if os.WriteFile(path, []byte(note), 0o644) == nil {
			l.recorded = append(l.recorded, path)
		}
	}
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

// Release drops the lock. The files stay, emptied (while still locked, so
// no new holder's note is wiped), so a later busy message names only live
// holders (or one that was killed before it could release).
func (l *Lock) Release() {
	for _, p := range l.recorded {
		_ = os.Truncate(p, 0)
	}
	for _, fl := range l.held {
		_ = fl.Unlock() // also closes the descriptor
	}
	l.held, l.recorded = nil, nil
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
