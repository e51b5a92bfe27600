package backend

import "fmt"

// ProtocolVersion is the version of the backend protocol this harness
// speaks (docs/protocol.md): go-plugin's handshake for plugin binaries, and
// the "protocol" field of a JSON-lines backend's info reply. Bump it when
// either changes incompatibly, and add a line to docs/protocol.md#changes.
const ProtocolVersion = 2

// ProtocolDoc is where a protocol mismatch sends the reader.
const ProtocolDoc = "docs/protocol.md#changes"

// ProtocolMismatch is a backend that speaks another version of the
// protocol: its replies cannot be read, so nothing else it says is trusted.
type ProtocolMismatch struct {
	Backend int    // the version the backend speaks
	Detail  string // how that was told, when not by the backend's own word
}

func (e *ProtocolMismatch) Error() string {
	msg := fmt.Sprintf("backend speaks protocol %d, this harness speaks %d: see %s", e.Backend, ProtocolVersion, ProtocolDoc)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// Devices are the device kinds a request may name (RunRequest.Device):
// "auto" lets the backend choose; the harness's --device cuda:N arrives as
// "cuda".
var Devices = []string{"auto", "cpu", "cuda", "rocm"}
