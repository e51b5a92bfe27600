package compare

import (
	"fmt"
	"slices"

	"github.com/xbench/xbench/harness/result"
)

// ModeError says that two sets timed the same backend and configuration in
// different modes (warm against cold cache, eager against CUDA graph):
// their ratio would measure the mode, not a change, so they never pair.
type ModeError struct {
	DirA, DirB   string
	ModeA, ModeB result.Mode
	Example      string // one backend and configuration timed both ways
	Count        int    // how many pairs differ
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("%s was timed %s and %s %s (%s; %d pair(s) differ): results of different timing modes do not pair "+
		"(allowed: two runs of one mode; time both with the same --cold-cache/--cuda-graph flags)",
		e.DirA, e.ModeA, e.DirB, e.ModeB, e.Example, e.Count)
}

// CheckModes returns a *ModeError when any backend and configuration
// present in both sets was timed in a different mode on each side, or nil.
func CheckModes(a, b *Set) error {
	var e *ModeError
	keys := make([]string, 0, len(a.Results))
	for k := range a.Results {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the example named is the same on every run
	for _, k := range keys {
		ra := a.Results[k]
		rb, ok := b.Results[k]
		if !ok || ra.Mode == rb.Mode {
			continue
		}
		if e == nil {
			e = &ModeError{DirA: a.Dir, DirB: b.Dir, ModeA: ra.Mode, ModeB: rb.Mode,
				Example: fmt.Sprintf("%s on %s, %s", ra.Backend, Label(ra.Config), ra.Device.Label())}
		}
		e.Count++
	}
	if e == nil {
		return nil
	}
	return e
}
