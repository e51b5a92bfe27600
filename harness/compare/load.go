// Package compare pairs the results of two runs by backend and
// configuration and says, with a test and an interval, whether each backend
// got faster or slower. It is the statistics layer between the results on
// disk (harness/store) and what the CLI prints or the report draws.
package compare

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
)

// Set is the results of one side of a comparison, one per backend and
// configuration.
type Set struct {
	Dir     string
	Results map[string]result.Result // by Key
	// Superseded counts results dropped because a later result (by
	// timestamp) had the same key: a folder holding several runs of one
	// configuration compares its newest.
	Superseded int
	// Skipped names each file that was not a valid result, with the reason.
	Skipped []string
}

// Resolve turns a command-line argument into a results tree: a folder or
// an archive (store.OpenTree) is taken as it is, otherwise the argument is
// a run id under resultsDir.
func Resolve(arg, resultsDir string) (string, error) {
	if store.IsTree(arg) {
		return arg, nil
	}
	p := filepath.Join(resultsDir, arg)
	if store.IsTree(p) {
		return p, nil
	}
	return "", fmt.Errorf("%q is neither a results folder, an archive nor a run id under %s", arg, resultsDir)
}

// Load reads every result below dir (recursively).
func Load(dir string) (*Set, error) {
	rs, skipped, err := store.ReadAll(dir)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		if len(skipped) > 0 {
			return nil, fmt.Errorf("load %s: no valid results in it (%d skipped, first: %s)", dir, len(skipped), skipped[0])
		}
		return nil, fmt.Errorf("load %s: no results in it", dir)
	}
	s := NewSet(dir, rs)
	s.Skipped = skipped
	return s, nil
}

// NewSet indexes results by key, keeping the newest of duplicates.
func NewSet(dir string, rs []result.Result) *Set {
	s := &Set{Dir: dir, Results: map[string]result.Result{}}
	// Stable sort by timestamp (RFC 3339 sorts as text), so among equal
	// timestamps the later path (store.ReadAll sorts by path) wins.
	sorted := append([]result.Result(nil), rs...)
	result.AdoptModel(sorted)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Timestamp < sorted[j].Timestamp })
	for _, r := range sorted {
		k := Key(r)
		if _, dup := s.Results[k]; dup {
			s.Superseded++
		}
		s.Results[k] = r
	}
	return s
}

// Key pairs results across runs: backend and configuration (store.Key)
// plus the device model (result.Device.Model), because one folder may hold
// the same backend on cpu and on cuda, or on an H100 and an H200, and those
// are different measurements: neither is an older duplicate of the other.
func Key(r result.Result) string {
	return store.Key(r.Backend, r.Config) + "@" + r.Device.Model()
}
