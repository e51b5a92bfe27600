package subprocess

import (
	"strings"
	"sync"
)

// tailBuffer keeps the last n lines written to it: what a failed backend
// printed last is what explains the failure.
type tailBuffer struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial string
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	parts := strings.Split(t.partial+string(p), "\n")
	t.partial = parts[len(parts)-1]
	t.lines = append(t.lines, parts[:len(parts)-1]...)
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := t.lines
	if t.partial != "" {
		all = append(append([]string(nil), all...), t.partial)
	}
	return strings.Join(all, "\n")
}
