package sweep

import (
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// tailLines is how much of a backend's output a failed cell keeps.
const tailLines = 40

// Tails keeps the last lines each backend printed since its cell started,
// so a failed cell carries its own explanation (result.Tail). It is an
// hclog sink on the logger the plugin processes report through: go-plugin
// relays a plugin's stderr as log entries named "<logger>.<backend>.<exe>".
type Tails struct {
	mu    sync.Mutex
	lines map[string][]string
}

var _ hclog.SinkAdapter = (*Tails)(nil)

// NewTails returns an empty sink.
func NewTails() *Tails { return &Tails{lines: map[string][]string{}} }

// Accept records a plugin's output line. go-plugin's own messages about the
// process (two name parts) and the plugin's debug chatter are left out.
func (t *Tails) Accept(name string, level hclog.Level, msg string, _ ...interface{}) {
	parts := strings.Split(name, ".")
	if len(parts) < 3 || level < hclog.Info {
		return
	}
	backend := parts[1]
	t.mu.Lock()
	defer t.mu.Unlock()
	l := append(t.lines[backend], strings.Split(strings.TrimRight(msg, "\n"), "\n")...)
	if len(l) > tailLines {
		l = append([]string(nil), l[len(l)-tailLines:]...)
	}
	t.lines[backend] = l
}

// Reset forgets a backend's lines; called as its next cell starts.
func (t *Tails) Reset(backend string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.lines, backend)
}

// Last returns what the backend printed since the last Reset.
func (t *Tails) Last(backend string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines[backend], "\n")
}

// lifecycle are go-plugin's reports of a plugin process ending. A sweep
// ends backends on purpose (timeouts, restarts after a failure, an
// interrupt) and says so in the cell's line, so at the default level these
// would only repeat it as errors.
var lifecycle = map[string]bool{
	"plugin process exited":            true,
	"plugin failed to exit gracefully": true,
	"error closing client during Kill": true,
}

type quietSink struct{ hclog.SinkAdapter }

// Quiet passes every entry to sink, go-plugin's process lifecycle reports
// demoted to debug.
func Quiet(sink hclog.SinkAdapter) hclog.SinkAdapter { return quietSink{sink} }

func (q quietSink) Accept(name string, level hclog.Level, msg string, args ...interface{}) {
	if lifecycle[msg] && level > hclog.Debug {
		level = hclog.Debug
	}
	q.SinkAdapter.Accept(name, level, msg, args...)
}
