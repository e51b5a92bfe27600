package problem

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// File is one problem of a level: its id (the number before the first
// underscore of its file name) and the file name, KernelBench's key.
type File struct {
	ID   int
	Name string
}

// LevelDir is the folder of one level: DIR/level<N>.
func LevelDir(dir string, level int) string {
	return filepath.Join(dir, "level"+strconv.Itoa(level))
}

// List reads the problems of one level, sorted by id. A file counts when
// its name is <id>_<anything>.py with id a positive decimal; other files
// are ignored. Two files with one id are an error naming both, since a
// problem's id must name one file.
func List(dir string, level int) ([]File, error) {
	ld := LevelDir(dir, level)
	entries, err := os.ReadDir(ld)
	if err != nil {
		return nil, fmt.Errorf("list problems of level %d: %w", level, err)
	}
	var out []File
	seen := map[int]string{}
	for _, e := range entries {
		id, ok := IDOf(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		if other, dup := seen[id]; dup {
			return nil, fmt.Errorf("list problems of %s: %s and %s both have id %d", ld, other, e.Name(), id)
		}
		seen[id] = e.Name()
		out = append(out, File{ID: id, Name: e.Name()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// IDOf is the id of a problem file name ("12_conv_relu.py" is 12), and
// whether the name is one.
func IDOf(name string) (int, bool) {
	head, _, ok := strings.Cut(name, "_")
	if !ok || !strings.HasSuffix(name, ".py") || head == "" || strings.HasPrefix(head, "0") {
		return 0, false
	}
	id, err := strconv.Atoi(head)
	if err != nil || id < 1 || id > MaxID {
		return 0, false
	}
	return id, true
}

// Find is the file of one problem.
func Find(dir string, level, id int) (File, error) {
	files, err := List(dir, level)
	if err != nil {
		return File{}, err
	}
	for _, f := range files {
		if f.ID == id {
			return f, nil
		}
	}
	return File{}, fmt.Errorf("find problem %d of level %d: no file %d_*.py in %s", id, level, id, LevelDir(dir, level))
}

// names caches file names for labels, which are asked for often.
var names sync.Map // "dir\x00level\x00id" -> string ("" when not found)

// NameOf is the file name of a problem, or "" when the folder does not have it.
func NameOf(dir string, level, id int) string {
	key := fmt.Sprintf("%s\x00%d\x00%d", dir, level, id)
	if v, ok := names.Load(key); ok {
		return v.(string)
	}
	name := ""
	if f, err := Find(dir, level, id); err == nil {
		name = f.Name
	}
	names.Store(key, name)
	return name
}
