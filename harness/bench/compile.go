package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// Compile compiles one configuration ahead of its timing in this session's
// process of the backend (backend.Compiler). Like Run it never fails as a
// call: the configuration's own failure (unsupported, a crash, out of
// memory, no answer within timeout) comes back as the Compiled status, and
// a process that failed or timed out is restarted for the next one. The
// only error is backend.ErrCannotCompile (wrapped), from a backend without
// the compile op: its cells are compiled where they are timed.
func (s *Session) Compile(ctx context.Context, fullName, device string, cfg result.Config, timeout time.Duration) (backend.Compiled, error) {
	name, variant := backend.SplitName(fullName)
	runCtx, cancel := cellContext(ctx, timeout)
	defer cancel()
	b, info, err := s.Backend(runCtx, name)
	if err != nil {
		st, msg := startFailure(runCtx, err, timeout)
		return backend.Compiled{Status: st, Message: msg}, nil
	}
	if why := refusal(info, fullName, device, cfg); why != "" {
		return backend.Compiled{Status: result.StatusUnsupported, Message: why}, nil
	}
	c, ok := b.(backend.Compiler)
	if !ok {
		return backend.Compiled{}, fmt.Errorf("%s: %w", fullName, backend.ErrCannotCompile)
	}
	out, err := c.Compile(runCtx, backend.RunRequest{Workload: cfg.Workload, Variant: variant, Device: device, Config: cfg, Mode: s.Mode})
	switch {
	case err == nil:
		if out.Status != result.StatusOK && out.Status != result.StatusUnsupported {
			s.Restart(name) // as after a failed run: the next compile gets a fresh process
		}
		return out, nil
	case errors.Is(err, backend.ErrCannotCompile):
		return backend.Compiled{}, err
	case timedOut(runCtx, err):
		s.Restart(name)
		return backend.Compiled{Status: result.StatusTimeout, Message: fmt.Sprintf("no answer within --timeout %s; the compiling process was killed", timeout)}, nil
	default:
		s.Restart(name)
		return backend.Compiled{Status: result.StatusFailed, Message: backend.ErrorText(err)}, nil
	}
}
