package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// Source hands out running backends by name; bench.Session is one.
type Source interface {
	Backend(ctx context.Context, name string) (backend.Backend, backend.Info, error)
	Restart(name string)
}

// Options is one `xbench profile` invocation's configuration.
type Options struct {
	Device   string
	Config   result.Config
	Calls    int
	Top      int
	TraceDir string        // absolute: backends run in other working folders
	Timeout  time.Duration // per backend, its start included
}

// Outcome is what happened to one backend.
type Outcome struct {
	Backend string
	// Status is ok, unsupported, failed or timeout, or "cannot profile" for
	// a backend without the capability (a normal answer, like unsupported).
	Status  string
	Message string
	Summary *Summary // set when Status is ok
}

// CannotProfile is Outcome.Status of a backend that has no profiler.
const CannotProfile = "cannot profile"

// TracePath is where backend name's trace goes in dir: one file per
// backend or variant ("pytorch/compile" -> pytorch_compile.json).
func TracePath(dir, name string) string {
	return filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".json")
}

// Run profiles the configuration on every backend in names, one after the
// other, printing each one's summary (or the one line saying why there is
// none) to w as it finishes, so one backend that cannot profile or fails
// does not stop the others.
func Run(ctx context.Context, src Source, names []string, opt Options, w io.Writer) []Outcome {
	var out []Outcome
	for _, name := range names {
		o := one(ctx, src, name, opt)
		out = append(out, o)
		switch {
		case o.Summary != nil:
			o.Summary.Write(w, opt.Top)
		case o.Status == CannotProfile:
			fmt.Fprintf(w, "%s cannot profile: %s\n", name, o.Message)
		default:
			fmt.Fprintf(w, "%s: %s: %s\n", name, o.Status, o.Message)
		}
		fmt.Fprintln(w)
	}
	return out
}

func one(ctx context.Context, src Source, full string, opt Options) Outcome {
	name, variant := backend.SplitName(full)
	o := Outcome{Backend: full, Status: string(result.StatusFailed)}
	cctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	b, info, err := src.Backend(cctx, name)
	if err != nil {
		o.Message = "start: " + backend.ErrorText(err)
		return o
	}
	caps, err := info.CapabilitiesOf(variant)
	if err == nil {
		if why := caps.Unsupported(opt.Device, opt.Config); why != "" {
			err = errors.New(why)
		}
	}
	if err != nil {
		o.Status, o.Message = string(result.StatusUnsupported), backend.ErrorText(err)
		return o
	}
	p, ok := b.(backend.Profiler)
	if !ok {
		o.Status, o.Message = CannotProfile, "the backend has no profiler"
		return o
	}
	trace := TracePath(opt.TraceDir, full)
	rep, err := p.Profile(cctx, backend.ProfileRequest{Workload: opt.Config.Workload, Variant: variant, Device: opt.Device,
		Config: opt.Config, Calls: opt.Calls, TracePath: trace})
	switch {
	case errors.Is(err, backend.ErrCannotProfile):
		why := strings.TrimPrefix(backend.ErrorText(err), backend.ErrCannotProfile.Error()+": ")
		o.Status, o.Message = CannotProfile, why
		return o
	case err != nil && cctx.Err() != nil:
		src.Restart(name) // a hung profiler: the next backend gets a fresh process
		o.Status, o.Message = string(result.StatusTimeout), fmt.Sprintf("no profile within --timeout %s; the backend process was killed", opt.Timeout)
		return o
	case err != nil:
		src.Restart(name)
		o.Message = backend.ErrorText(err)
		return o
	case rep.Status != result.StatusOK:
		o.Status, o.Message = string(rep.Status), rep.Message
		return o
	}
	// Trust but check: the trace the backend says it wrote must be there.
	if rep.TracePath == "" {
		rep.TracePath = trace
	}
	if _, err := CheckTrace(rep.TracePath); err != nil {
		o.Message = fmt.Sprintf("the backend reported a profile but its trace is not usable: %v", err)
		return o
	}
	s := Summarize(full, rep)
	if len(s.Kernels) == 0 {
		o.Message = fmt.Sprintf("%s recorded no kernel with any time in %d calls", rep.Profiler, rep.Calls)
		return o
	}
	o.Status, o.Summary = string(result.StatusOK), &s
	return o
}
