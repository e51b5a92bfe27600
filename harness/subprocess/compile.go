package subprocess

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

var _ backend.Compiler = (*Backend)(nil)

// Compile sends the optional "compile" op (docs/protocol.md). A program
// that predates the op answers "unknown op", which becomes
// backend.ErrCannotCompile. A process that dies while compiling is the
// configuration's failure, not the harness's: it comes back as a failed
// Compiled with the process's last output, for the classifier.
func (b *Backend) Compile(ctx context.Context, req backend.RunRequest) (backend.Compiled, error) {
	rep, err := b.call(ctx, "compile", req)
	if err != nil {
		var exit *ExitError
		if errors.As(err, &exit) {
			return backend.Compiled{Status: result.StatusFailed, Message: exitMessage(exit) + tailNote(exit.Tail)}, nil
		}
		if declined(rep) {
			return backend.Compiled{}, fmt.Errorf("%w: %s", backend.ErrCannotCompile, rep.Error)
		}
		return backend.Compiled{}, err
	}
	if rep.Compiled == nil {
		return backend.Compiled{}, errors.New("compile: reply has no compiled object")
	}
	return *rep.Compiled, nil
}

// tailNote keeps the last lines of a dead process's output with its
// message, where the classifier finds out-of-memory words.
func tailNote(tail string) string {
	if tail = strings.TrimSpace(lastLines(tail, 5)); tail != "" {
		return "; last output: " + tail
	}
	return ""
}
