package burnstylehip

import "testing"

// Each entry of the workload table is complete and declares the workload
// it is filed under, so Info, Run, Export and Profile agree on the set.
func TestWorkloadTableEntriesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range workloadTable {
		if w.caps == nil || w.run == nil || w.export == nil {
			t.Errorf("%s: caps, run or export missing", w.name)
			continue
		}
		if got := w.caps([]string{"cpu"}).Workload; got != w.name {
			t.Errorf("entry %s declares workload %q", w.name, got)
		}
		if seen[w.name] {
			t.Errorf("%s: two entries", w.name)
		}
		seen[w.name] = true
		if _, ok := workloadOf(w.name); !ok {
			t.Errorf("workloadOf(%q) finds no entry", w.name)
		}
	}
	if _, ok := workloadOf("no-such-workload"); ok {
		t.Error("workloadOf found an entry for an undeclared workload")
	}
}
