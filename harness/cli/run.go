package cli

import (
	"github.com/xbench/xbench/harness/compare"
	"strconv"

	"github.com/xbench/xbench/harness/subprocess"
	"github.com/xbench/xbench/harness/workload"

	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/runner"
	"github.com/xbench/xbench/harness/store"
)

// commonFlags are the flags of every command that starts backends.
type commonFlags struct {
	backends, env, logLevel, resultsDir string
	compileCache                        string
	pluginPath                          []string
	timeout, startTimeout               time.Duration
	maxReply                            int
	fs                                  *pflag.FlagSet
}

func (c *commonFlags) register(fs *pflag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.backends, "backends", "", "comma-separated backends or variants (default: every available one)")
	fs.StringVar(&c.env, "env", "auto", "how to run non-built-in backends: auto, nix, venv")
	fs.StringVar(&c.logLevel, "log-level", "warn", "harness log level: "+strings.Join(logLevels, ", "))
	fs.StringVar(&c.resultsDir, "results", defaultResults, "folder the results are written to (the default is git-ignored)")
	fs.StringSliceVar(&c.pluginPath, "plugin-path", nil, "more folders holding <name>/plugin.json backends")
	fs.DurationVar(&c.timeout, "timeout", 300*time.Second, "longest one backend may take to start, or for one configuration")
	fs.DurationVar(&c.startTimeout, "start-timeout", 0, "longest one backend may take to start (its framework imports), bounded on its own so --timeout covers only the configuration (default 0: the start counts against --timeout)")
	fs.IntVar(&c.maxReply, "max-reply", subprocess.DefaultMaxReplyBytes, "largest reply (bytes) a backend may send; a larger one is a failed result")
	fs.StringVar(&c.compileCache, "compile-cache", "", "folder of the backends' persistent compile caches (XLA, inductor, Triton), reused across runs and SLURM tasks (default: none)")
}

// startBound is what bounds one backend's start: --start-timeout when
// given, else --timeout.
func (c *commonFlags) startBound() bound {
	if c.startTimeout > 0 {
		return bound{c.startTimeout, "--start-timeout"}
	}
	return bound{c.timeout, "--timeout"}
}

// bound is a time limit and the flag that set it, for the message that
// names it when it is exceeded.
type bound struct {
	d    time.Duration
	flag string
}

var logLevels = []string{"trace", "debug", "info", "warn", "error"}

// check refuses hostile or meaningless values before any backend starts.
func (c *commonFlags) check() error {
	if c.timeout <= 0 {
		return usagef("--timeout %s is not allowed (allowed: a positive duration, e.g. 300s or 10m)", c.timeout)
	}
	if c.startTimeout < 0 {
		return usagef("--start-timeout %s is not allowed (allowed: a positive duration, e.g. 120s, or 0 for the start to count against --timeout)", c.startTimeout)
	}
	if err := oneOf("--log-level", c.logLevel, logLevels); err != nil {
		return err
	}
	if c.fs != nil && c.fs.Changed("backends") && strings.TrimSpace(c.backends) == "" {
		return usagef("--backends \"\" is empty (allowed: a comma list of backends; leave the flag out to run every one)")
	}
	for _, p := range c.pluginPath {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return usagef("--plugin-path %q is not a folder (allowed: existing folders holding <name>/plugin.json)", workload.Cut(p, 80))
		}
	}
	if c.maxReply < 1024 || c.maxReply > 1<<30 {
		return usagef("--max-reply %d is not allowed (allowed: 1024 to %d bytes)", c.maxReply, 1<<30)
	}
	// Plugin processes inherit it: the JSON-lines reader enforces it there.
	os.Setenv(subprocess.MaxReplyEnv, strconv.Itoa(c.maxReply))
	if c.fs != nil && c.fs.Changed("compile-cache") {
		if c.compileCache == "" {
			return usagef("--compile-cache \"\" is empty (allowed: a folder; leave the flag out for no persistent cache)")
		}
		return useCompileCache(c.compileCache)
	}
	return nil
}

// checkWritable is check plus proof that results can be written, for the
// commands that write them, before any backend starts.
func (c *commonFlags) checkWritable() error {
	if err := c.check(); err != nil {
		return err
	}
	if c.resultsDir == "" {
		return usagef("--results \"\" is empty (allowed: a folder to write results to)")
	}
	return writable(c.resultsDir)
}

// writable creates dir if needed and proves a file can be written there.
func writable(dir string) error { return writableFlag("--results", dir) }

// writableFlag is writable for the folder given by flag.
func writableFlag(flag, dir string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usagef("%s %q is a file (allowed: a folder)", flag, workload.Cut(dir, 80))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("%s %q cannot be created: %v", flag, workload.Cut(dir, 80), err)
	}
	f, err := os.CreateTemp(dir, ".xbench-write-check-*")
	if err != nil {
		return usagef("%s %q is not writable: %v", flag, workload.Cut(dir, 80), err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// openRegistry finds the checkout and its backends, logging to stderr.
func (a *App) openRegistry(c *commonFlags) (*registry.Registry, string, error) {
	return a.openRegistryWith(c, a.logger(c.logLevel))
}

// openRegistryWith is openRegistry with the caller's logger for plugin output.
func (a *App) openRegistryWith(c *commonFlags, logger hclog.Logger) (*registry.Registry, string, error) {
	mode, err := runner.ParseMode(c.env)
	if err != nil {
		return nil, "", usagef("%s", err)
	}
	cwd, _ := os.Getwd()
	root, err := registry.FindRoot(cwd)
	if err != nil {
		return nil, "", err
	}
	self, err := selfPath()
	if err != nil {
		return nil, "", err
	}
	reg, err := registry.Open(registry.Options{Root: root, ExtraDirs: c.pluginPath, Env: mode, Self: self, Logger: logger}, a.Builtins)
	return reg, root, err
}

func runCmd(ctx context.Context, a *App, args []string) error {
	wl, err := workloadArg(args)
	if err != nil {
		return err
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	var w workloadFlags
	var c commonFlags
	var m modeFlags
	var asJSON bool
	var baseline string
	w.register(fs, wl, false, nil)
	c.register(fs)
	m.register(fs, wl)
	fs.BoolVar(&asJSON, "json", false, "print one result JSON per line instead of a table")
	fs.StringVar(&baseline, "baseline", "", "backend the ratio column and the speed-ups compare against (default: pytorch if run, else the first by name; as report)")
	if help, err := parseFlagsHelp(a, fs, args, runExitHelp); help || err != nil {
		return err
	}
	jobs, err := w.jobs(fs)
	if err != nil {
		return err
	}
	if err := c.checkWritable(); err != nil {
		return err
	}
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	sess := a.newSession(reg, root, pinEnv(w.gpu), w.deviceKinds()...)
	sess.Mode, sess.StartTimeout = m.mode(), c.startTimeout
	defer sess.Close()
	names, err := selectBackends(ctx, a, reg, sess, c.backends, c.startBound(), wl.Name())
	if err != nil {
		return err
	}
	if baseline != "" && !contains(names, baseline) {
		return usagef("--baseline %q is not among the backends run (backends: %s)", workload.Cut(baseline, 80), strings.Join(names, ", "))
	}
	warnGPUSizedDefaults(a, fs, wl, w.device) // after every input is checked: a refusal stays one line
	var results []result.Result
	total := len(names) * len(jobs)
	done := 0
	for _, job := range jobs {
		for _, name := range names {
			done++
			fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s on %s ...\n", done, total, name, describe(job.Config), deviceText(job.Device, job.GPU))
			start := time.Now()
			r := sess.Run(ctx, name, job.Device, job.Config, c.timeout)
			if ctx.Err() != nil {
				// Interrupted: a cell that never finished is not a result.
				return &ExitError{Code: 130, Msg: fmt.Sprintf("interrupted after %d of %d runs; nothing was written for the rest", done-1, total)}
			}
			path, err := store.WriteResult(c.resultsDir, r)
			if err != nil {
				// Keep the measurement: print it, so a full disk loses nothing.
				line, _ := json.Marshal(r)
				fmt.Fprintln(a.Stdout, string(line))
				return fmt.Errorf("%w (the result is printed above as JSON)", err)
			}
			fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s in %.1fs, written to %s\n", done, total, name, r.Status, time.Since(start).Seconds(), path)
			results = append(results, r)
			if asJSON {
				line, _ := json.Marshal(r)
				fmt.Fprintln(a.Stdout, string(line))
			}
		}
	}
	if !asJSON {
		if baseline == "" {
			baseline = compare.DefaultBaseline(names) // one rule with report and the sweep's summary
		}
		writeRunTable(a.Stdout, results, baseline)
		if len(names) > 1 {
			fmt.Fprintln(a.Stdout)
			if err := compare.WriteWinners(a.Stdout, compare.Winners(results, baseline), baseline); err != nil {
				return err
			}
		}
	}
	return failedError(results)
}

// newSession starts a session that reports each backend's start-up time;
// env pins its backend processes to a GPU (--device cuda:N), or is nil;
// kinds are the device kinds its jobs ask for (withRocm).
func (a *App) newSession(reg *registry.Registry, root string, env []string, kinds ...string) *bench.Session {
	meta, env := withRocm(sessionMeta(root, reg), env, kinds...)
	sess := bench.NewSession(reg, newRunID(), meta, env)
	sess.OnStart = func(name string, took time.Duration) {
		fmt.Fprintf(a.Stderr, "started %s in %.2fs (process, imports, handshake; paid once per invocation)\n", name, took.Seconds())
	}
	return sess
}

// runExitHelp ends xbench run --help: what its exit status says.
const runExitHelp = `
Exit status: 0 when every result is ok or unsupported; 1 when any ends failed,
timeout or oom (every result is still written); 2 on bad input; 130 when interrupted.
`

// failedError is exit 1 naming each result that ended failed, timeout or
// oom: a script that runs xbench run must not take a cell that produced no
// timing for one that did.
func failedError(results []result.Result) error {
	var bad []string
	for _, r := range results {
		switch r.Status {
		case result.StatusFailed, result.StatusTimeout, result.StatusOOM:
			bad = append(bad, r.Backend+" ("+string(r.Status)+")")
		}
	}
	if len(bad) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("%d of %d results ended failed, timeout or oom: %s", len(bad), len(results), strings.Join(bad, ", "))}
	}
	return nil
}

func describe(c result.Config) string { return c.Workload + " " + workload.Label(c) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// defaultResults is where run, verify and sweep write unless told: inside
// the checkout's results/ (so report and export find it) but git-ignored,
// so measurements never show up as untracked files of the source tree.
const defaultResults = "results/local"
