package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
)

// Names in a sweep folder. Everything that is not a cell starts with "." or
// "_", which store.ReadAll skips, so the folder stays a valid results tree.
const (
	planFile = "_plan.json"
	slurmDir = "_slurm"
)

// Entry is one cell file as found on disk.
type Entry struct {
	Key    string // file name without .json
	Result result.Result
	Err    error // unreadable, not JSON or not a valid result; the cell reruns
}

// Folder reads and writes the cells of one sweep folder. Reading is cached
// by size and modification time, so the rescans that let shards see each
// other's results stay cheap; every cell file is written once, atomically,
// so a file that did not change on disk did not change at all.
type Folder struct {
	Dir   string
	cache map[string]cachedEntry
}

type cachedEntry struct {
	size  int64
	mtime time.Time
	entry Entry
}

// NewFolder prepares dir (created on first write).
func NewFolder(dir string) *Folder { return &Folder{Dir: dir, cache: map[string]cachedEntry{}} }

// Path is the file a cell is written to.
func (f *Folder) Path(key string) string { return filepath.Join(f.Dir, key+".json") }

// Scan reads every cell file in the folder. A folder that does not exist yet
// is empty. Invalid files come back with Err set instead of failing the scan:
// one bad file must not hide every other cell from --status.
func (f *Folder) Scan() (map[string]Entry, error) {
	des, err := os.ReadDir(f.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan sweep folder %s: %w", f.Dir, err)
	}
	out := make(map[string]Entry, len(des))
	for _, de := range des {
		name := de.Name()
		if de.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		key := strings.TrimSuffix(name, ".json")
		info, err := de.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted since ReadDir (--clear-failures elsewhere)
		}
		if err != nil {
			out[key] = Entry{Key: key, Err: err}
			continue
		}
		var e Entry
		if c, ok := f.cache[key]; ok && c.size == info.Size() && c.mtime.Equal(info.ModTime()) {
			e = c.entry
		} else {
			e = readEntry(filepath.Join(f.Dir, name), key)
			f.cache[key] = cachedEntry{size: info.Size(), mtime: info.ModTime(), entry: e}
		}
		out[cellKey(e)] = e
	}
	return out, nil
}

// cellKey is the key a cell file stands for: its configuration's key today
// (Cell.Key), which differs from its file name (Entry.Key) for a file named
// by an older key (an absolute problem folder spelt out), so such a cell
// still counts as done. An unreadable file keeps its name.
func cellKey(e Entry) string {
	if e.Err != nil {
		return e.Key
	}
	return Cell{Backend: e.Result.Backend, Device: deviceOfKey(e.Key), Config: e.Result.Config}.Key()
}

func readEntry(path, key string) Entry {
	raw, err := store.ReadRegular(path, store.MaxFileBytes)
	if err != nil {
		return Entry{Key: key, Err: fmt.Errorf("read cell %s: %w", path, err)}
	}
	r, err := result.Decode(raw)
	if err == nil {
		r, err = store.Summarize(r) // statistics from the samples, as every reader
	}
	if err != nil {
		return Entry{Key: key, Err: fmt.Errorf("cell %s: %w", path, err)}
	}
	return Entry{Key: key, Result: r}
}

// Write stores one finished cell: temp file, fsync, rename, fsync of the
// folder. The result is validated first, so the harness never writes a file
// it would later refuse to read.
func (f *Folder) Write(key string, r result.Result) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cell %s: %w", key, err)
	}
	if err := result.Validate(raw); err != nil {
		return fmt.Errorf("cell %s: harness built an invalid result: %w", key, err)
	}
	return store.WriteFileAtomic(f.Path(key), append(raw, '\n'))
}

// ClearFailures deletes the failed and timeout cells, so the next sweep runs
// them again, and the skipped ones with them: a skip is derived from an
// oom or timeout cell and is recomputed in no time if its cause remains.
// Invalid files go too, since a rerun would overwrite them anyway.
func (f *Folder) ClearFailures() ([]string, error) {
	entries, err := f.Scan()
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		switch {
		case e.Err != nil:
		case e.Result.Status == result.StatusFailed, e.Result.Status == result.StatusTimeout, e.Result.Status == result.StatusSkipped:
		default:
			continue
		}
		if err := os.Remove(f.Path(e.Key)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, fmt.Errorf("clear failed cell: %w", err)
		}
		delete(f.cache, e.Key)
		removed = append(removed, e.Key)
	}
	sort.Strings(removed)
	if len(removed) > 0 {
		syncDir(f.Dir)
	}
	return removed, nil
}

// RemoveStaleTemps deletes temp files a killed writer left behind. Only a
// caller holding the exclusive lock may do it: with shards running, a temp
// file may be a write in progress.
func (f *Folder) RemoveStaleTemps() error {
	tmps, err := filepath.Glob(filepath.Join(f.Dir, ".tmp-*"))
	if err != nil {
		return fmt.Errorf("find temp files in %s: %w", f.Dir, err)
	}
	for _, t := range tmps {
		if err := os.Remove(t); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stale temp file: %w", err)
		}
	}
	return nil
}

// Plan is what a sweep meant to run, so --status can count what is pending
// without being given the sweep's flags again.
type Plan struct {
	Cells []Cell `json:"cells"`
}

// WritePlan records the sweep's cells (the last sweep started wins).
func (f *Folder) WritePlan(cells []Cell) error {
	raw, err := json.MarshalIndent(Plan{Cells: cells}, "", " ")
	if err != nil {
		return fmt.Errorf("encode sweep plan: %w", err)
	}
	return store.WriteFileAtomic(filepath.Join(f.Dir, planFile), append(raw, '\n'))
}

// ReadPlan returns the recorded plan, or nil when no sweep wrote one.
func (f *Folder) ReadPlan() ([]Cell, error) {
	path := filepath.Join(f.Dir, planFile)
	raw, err := store.ReadRegular(path, store.MaxFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sweep plan: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("decode sweep plan %s: %w", path, err)
	}
	return p.Cells, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
