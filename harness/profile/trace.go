package profile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Event is one complete event ("ph": "X") of the Chrome trace-event format,
// times in microseconds, for a backend that writes its own trace (the
// native backend; the frameworks' profilers write theirs).
type Event struct {
	Name string  `json:"name"`
	Cat  string  `json:"cat,omitempty"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`
	Dur  float64 `json:"dur"`
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
}

// Span makes the event for a phase that ran from start for d, relative to
// origin, on thread tid.
func Span(name string, origin, start time.Time, d time.Duration, tid int) Event {
	return Event{Name: name, Cat: string(Classify(name)), Ph: "X",
		Ts: float64(start.Sub(origin).Nanoseconds()) / 1e3, Dur: float64(d.Nanoseconds()) / 1e3, Pid: 1, Tid: tid}
}

// WriteTrace writes events as {"traceEvents": [...]} to path, creating its
// folder.
func WriteTrace(path string, events []Event) error {
	if events == nil {
		events = []Event{}
	}
	raw, err := json.Marshal(map[string]any{"traceEvents": events, "displayTimeUnit": "ms"})
	if err != nil {
		return fmt.Errorf("encode trace %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write trace %s: %w", path, err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return fmt.Errorf("write trace %s: %w", path, err)
	}
	return nil
}

// CheckTrace says whether path holds a Chrome trace with at least one
// event: the harness checks what a backend claims to have written.
func CheckTrace(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read trace: %w", err)
	}
	var t struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return 0, fmt.Errorf("trace %s is not trace-event JSON: %w", path, err)
	}
	if len(t.TraceEvents) == 0 {
		return 0, fmt.Errorf("trace %s has no traceEvents", path)
	}
	return len(t.TraceEvents), nil
}
