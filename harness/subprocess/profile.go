package subprocess

import (
	"context"
	"errors"
	"fmt"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

var _ backend.Profiler = (*Backend)(nil)

// Profile sends the optional "profile" op (docs/protocol.md). As with
// calibrate, a program that predates the op ("unknown op") and a framework
// without a profiler ("cannot profile") both become
// backend.ErrCannotProfile, so the harness prints one clear line.
func (b *Backend) Profile(ctx context.Context, req backend.ProfileRequest) (backend.ProfileReport, error) {
	rep, err := b.call(ctx, "profile", req)
	if err != nil {
		if declined(rep, "cannot profile") {
			return backend.ProfileReport{}, fmt.Errorf("%w: %s", backend.ErrCannotProfile, rep.Error)
		}
		var exit *ExitError
		if errors.As(err, &exit) {
			// A crash under the profiler is that configuration's failure,
			// reported like a run's, not the end of the command.
			return backend.ProfileReport{Status: result.StatusFailed, Message: exitMessage(exit), Calls: req.Calls}, nil
		}
		return backend.ProfileReport{}, err
	}
	if rep.Profile == nil {
		return backend.ProfileReport{}, errors.New("profile: reply has no profile object")
	}
	return *rep.Profile, nil
}
