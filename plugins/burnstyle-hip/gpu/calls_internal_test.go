package gpu

import (
	"strings"
	"testing"
)

func TestCalls(t *testing.T) {
	for _, tc := range []struct {
		name      string
		calls     Calls
		wantErr   bool
		wantFlush int64
		wantNote  string
	}{
		{"warm", Calls{Warmup: 2, Repeats: 5}, false, 0, ""},
		{"cold", Calls{Warmup: 0, Repeats: 1, ColdCache: true}, false, FlushBytes, "256 MiB memset"},
		{"negative warmup", Calls{Warmup: -1, Repeats: 1}, true, 0, ""},
		{"no repeats", Calls{Warmup: 1, Repeats: 0}, true, 0, ""},
	} {
		err := tc.calls.Check("probe")
		if (err != nil) != tc.wantErr || err != nil && !strings.Contains(err.Error(), "probe") {
			t.Errorf("%s: Check = %v, want error %v naming the call", tc.name, err, tc.wantErr)
		}
		if got := tc.calls.flushBytes(); got != tc.wantFlush {
			t.Errorf("%s: flushBytes = %d, want %d", tc.name, got, tc.wantFlush)
		}
		if note := tc.calls.Note(); tc.wantNote == "" && note != "" || !strings.Contains(note, tc.wantNote) {
			t.Errorf("%s: Note = %q, want %q", tc.name, note, tc.wantNote)
		}
	}
}
