// Package facts is the one description of what backends must agree on:
// the protocol and schema versions, the devices a request may name, the
// phases, the words of an out-of-memory error, and every workload's parameters (defaults, enums, bounds) and spec
// facts (TTT's sizes and constants), all read from their Go declarations.
// `xbench workloads --json` prints it; the Python backends read the copy
// generated into plugins/_python/xbench_py/facts.json, so nothing of it is
// kept by hand in Python. Regenerate that copy with `go generate ./harness/facts`
// after changing a declaration (TestCommittedFactsAreFresh fails until then).
package facts

//go:generate go run ../cmd/genfacts ../../plugins/_python/xbench_py/facts.json

import (
	"bytes"
	"encoding/json"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all" // registers every workload
)

// PythonPath is where the generated copy lives, from the repository root.
const PythonPath = "plugins/_python/xbench_py/facts.json"

// Facts is the document.
type Facts struct {
	Note            string           `json:"_note"`
	ProtocolVersion int              `json:"protocol_version"`
	SchemaVersion   int              `json:"schema_version"`
	Devices         []string         `json:"devices"`
	Phases          []string         `json:"phases"`
	OOMMarkers      []string         `json:"oom_markers"` // harness/bench: how frameworks word running out of memory
	Workloads       []workload.Facts `json:"workloads"`
}

// Get assembles the facts from the declarations.
func Get() Facts {
	return Facts{
		Note:            "generated from the Go declarations by `go generate ./harness/facts` (harness/cmd/genfacts); do not edit",
		ProtocolVersion: backend.ProtocolVersion,
		SchemaVersion:   result.SchemaVersion,
		Devices:         backend.Devices,
		Phases:          workload.AllPhases,
		OOMMarkers:      bench.OOMMarkers(),
		Workloads:       workload.Catalog(),
	}
}

// JSON is the facts as the committed file holds them: indented, keys in
// declaration order, a final newline.
func JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Get()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
