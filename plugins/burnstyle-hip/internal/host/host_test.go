package host

import (
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

func TestFits(t *testing.T) {
	defer func() { Available = MemAvailable }()
	for _, tc := range []struct {
		name      string
		available int64
		need      float64
		want      result.Status
		message   string
	}{
		{"fits", 10 << 30, 1 << 30, result.StatusOK, ""},
		{"above 90% of what is free", 10 << 30, 9.5 * (1 << 30), result.StatusOOM, "needs about 9.5 GiB of host memory, 10.0 GiB available"},
		{"unknown memory never refuses", 0, 1 << 50, result.StatusOK, ""},
	} {
		Available = func() int64 { return tc.available }
		st, msg := Fits(tc.need)
		if st != tc.want || !strings.Contains(msg, tc.message) || (tc.message == "") != (msg == "") {
			t.Errorf("%s: %s %q, want %s %q", tc.name, st, msg, tc.want, tc.message)
		}
	}
	if CPUName() == "" {
		t.Error("CPUName is empty")
	}
}
