package workload

import (
	"strings"
	"testing"
)

func TestRows(t *testing.T) {
	type row struct{ name string }
	rows := []row{{"a"}, {"b"}}
	name := func(r row) string { return r.name }
	if got := RowNames(rows, name); strings.Join(got, ",") != "a,b" {
		t.Errorf("RowNames = %q", got)
	}
	if r, err := LookupRow("x dtype", rows, name, "b"); err != nil || r.name != "b" {
		t.Errorf("LookupRow b = %v, %v", r, err)
	}
	if _, err := LookupRow("x dtype", rows, name, "c"); err == nil || err.Error() != `x dtype "c": unknown (allowed: [a b])` {
		t.Errorf("LookupRow c: %v", err)
	}
}
