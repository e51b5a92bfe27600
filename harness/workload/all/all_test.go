package all

import (
	"testing"

	"github.com/xbench/xbench/harness/workload"
)

// Every registered workload has a float64 reference verify can reach: its
// own (Referencer or MultiOutput), or, only where the reference is code a
// backend hosts, a named backend; never both, so no contestant grades a
// workload the harness can compute itself.
func TestEveryWorkloadHasOneReference(t *testing.T) {
	if len(workload.All()) == 0 {
		t.Fatal("no workload registered")
	}
	for _, w := range workload.All() {
		_, ref := w.(workload.Referencer)
		_, multi := w.(workload.MultiOutput)
		backendRef := workload.ReferenceBackendOf(w)
		switch {
		case backendRef != "" && (ref || multi):
			t.Errorf("%s computes its reference and also names backend %q as its grader", w.Name(), backendRef)
		case backendRef == "" && !ref && !multi:
			t.Errorf("%s has no reference: it implements neither workload.Referencer nor workload.MultiOutput", w.Name())
		}
	}
}
