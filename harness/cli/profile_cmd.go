package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/profile"
	"github.com/xbench/xbench/harness/workload"
)

// profileCmd runs one configuration under each backend's own profiler
// (harness/profile does the work). Its figures are profiled, never timings.
func profileCmd(ctx context.Context, a *App, args []string) error {
	wl, err := workloadArg(args)
	if err != nil {
		return err
	}
	fs := pflag.NewFlagSet("profile", pflag.ContinueOnError)
	var w workloadFlags
	var c commonFlags
	var calls, top int
	var traceDir string
	w.register(fs, wl, false, nil)
	c.register(fs)
	fs.Lookup("warmup").Usage = "calls after the first (compile) call, outside the profiler"
	fs.Lookup("repeats").Usage = "unused by profile (see --calls); accepted so run's flags work here"
	fs.IntVar(&calls, "calls", 3, "calls made under the profiler, after the warm-up")
	fs.IntVar(&top, "top", 15, "kernels listed per backend, by self time (0: all)")
	fs.StringVar(&traceDir, "trace-dir", "", "folder for the Chrome traces, one <backend>.json each (default: <results>/profile/<time>)")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if calls < 1 || calls > 1000 {
		return usagef("--calls %d is not allowed (allowed: 1 to 1000)", calls)
	}
	if top < 0 {
		return usagef("--top %d is not allowed (allowed: 0 for every kernel, or a positive count)", top)
	}
	job, err := w.one(fs)
	if err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	if traceDir == "" {
		traceDir = filepath.Join(c.resultsDir, "profile", time.Now().UTC().Format("20060102T150405Z"))
	}
	// Absolute: the backends run in their own folders.
	if traceDir, err = filepath.Abs(traceDir); err != nil {
		return usagef("--trace-dir %q: %v", workload.Cut(traceDir, 80), err)
	}
	if err := writableFlag("--trace-dir", traceDir); err != nil {
		return err
	}
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	sess := a.newSession(reg, root, pinEnv(w.gpu), job.Device)
	defer sess.Close()
	names, err := selectBackends(ctx, a, reg, sess, c.backends, c.startBound(), wl.Name())
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "profile: %s on %s, %d calls under each backend's profiler after %d warm-up calls; traces go to %s\n",
		describe(job.Config), job.Device, calls, job.Config.Warmup, traceDir)
	outs := profile.Run(ctx, sess, names, profile.Options{Device: job.Device, Config: job.Config, Calls: calls, Top: top,
		TraceDir: traceDir, Timeout: c.timeout}, a.Stdout)
	if ctx.Err() != nil {
		return &ExitError{Code: 130, Msg: "interrupted"}
	}
	var bad []string
	for _, o := range outs {
		if o.Status == "failed" || o.Status == "timeout" {
			bad = append(bad, o.Backend+" ("+o.Status+")")
		}
	}
	if len(bad) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("%d of %d backends did not produce a profile: %s", len(bad), len(outs), strings.Join(bad, ", "))}
	}
	return nil
}
