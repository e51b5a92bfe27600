package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/sweep"
	"github.com/xbench/xbench/harness/workload"
)

const sweepHelp = `Run the cross product of comma lists (or a sweep file) into one folder,
cheapest cells first. A cell that runs out of memory or time stops the
larger cells of its backend, device and dtype (recorded as skipped). Rerun
the same command to finish an interrupted sweep; finished cells are kept
unless --force. Sweep file (--config): a JSON object keyed by these flag
names, lists allowed, e.g. {"backends": "pytorch", "seq-len": [512, 1024],
"dtype": ["float32", "bfloat16"], "timeout": "10m"}; flags given on the
command line win. See docs/sweeps.md.

`

// notInFile are the flags a sweep file may not set: actions, and --force,
// which in a file would make every rerun start over.
var notInFile = map[string]bool{"config": true, "status": true, "csv": true, "clear-failures": true,
	"slurm": true, "shard": true, "force": true, "help": true}

// gpuID is what CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES accept.
var gpuID = regexp.MustCompile(`^([0-9]+|(GPU|MIG)-[0-9A-Za-z/-]+)$`)

type sweepFlags struct {
	c                                commonFlags
	w                                workloadFlags
	m                                modeFlags
	config, gpus, shard, slurmArgs   string
	budget                           string
	force, status, csv, clear, slurm bool
	slurmTasks, perBucket            int
	compileAhead                     int
	cellsPerCall                     int
	budgetDur                        time.Duration // --budget, parsed
}

func sweepCmd(ctx context.Context, a *App, args []string) error {
	wl, err := sweepWorkload(args)
	if err != nil {
		return err
	}
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	var f sweepFlags
	f.c.register(fs)
	fs.Lookup("results").DefValue, f.c.resultsDir = defaultResults+"/sweep", defaultResults+"/sweep"
	fs.Lookup("results").Usage = "sweep folder: one file per cell, shared by shards and reruns"
	f.w.register(fs, wl, true, nil)
	f.m.register(fs, wl)
	fs.StringVar(&f.config, "config", "", "sweep file (JSON, keys are these flag names)")
	fs.BoolVar(&f.force, "force", false, "run every cell again, even those with a file")
	fs.StringVar(&f.budget, "budget", "", "minutes (or a duration such as 90s, 1h30m) this invocation may begin cells in; cheapest first, the rest stay for a rerun")
	fs.IntVar(&f.compileAhead, "compile-ahead", 0, "helper processes per backend that compile cells (XLA, Triton autotuning) into --compile-cache before they are timed; 0: each cell compiles where it is timed")
	fs.IntVar(&f.cellsPerCall, "cells-per-call", defaultCellsPerCall, "cells of one backend and device sent in one round trip (run_batch) where the backend takes several; 1: one by one")
	if _, ok := wl.(workload.Bucketer); ok {
		fs.IntVar(&f.perBucket, "per-bucket", 0, "time this many configurations of each canonical shape bucket (the largest, then evenly spaced), not every one (0: all)")
	}
	fs.BoolVar(&f.status, "status", false, "print cell counts by status and backend, run nothing")
	fs.BoolVar(&f.csv, "csv", false, "print one CSV row per finished cell, run nothing")
	fs.BoolVar(&f.clear, "clear-failures", false, "delete failed, timeout and skipped cells so the next sweep reruns them")
	fs.StringVar(&f.gpus, "gpus", "", "GPU ids, one worker (and backend processes) per GPU, e.g. 0,1,2,3 (not with --device cuda:N)")
	fs.StringVar(&f.shard, "shard", "", "run only shard i of N (i/N, 0-based), as SLURM array task i does")
	fs.BoolVar(&f.slurm, "slurm", false, "submit the sweep as a SLURM job array, one shard per task")
	fs.StringVar(&f.slurmArgs, "slurm-args", "", "more sbatch arguments, split at spaces (e.g. \"--partition=gpu --time=4:00:00\")")
	fs.IntVar(&f.slurmTasks, "slurm-tasks", 4, "array tasks (shards) for --slurm")
	if hasHelp(args) {
		fmt.Fprint(a.Stdout, sweepHelp)
	}
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if err := f.applyFile(fs); err != nil {
		return err
	}
	actions := 0
	for _, on := range []bool{f.status, f.csv, f.clear, f.slurm} {
		if on {
			actions++
		}
	}
	if actions > 1 {
		return usagef("--status, --csv, --clear-failures and --slurm were combined (allowed: one of them at a time)")
	}
	folder := sweep.NewFolder(f.c.resultsDir)
	switch {
	case f.status, f.csv:
		return f.report(a, folder)
	case f.clear:
		return clearFailures(a, folder)
	}
	if f.slurm && f.shard != "" {
		return usagef("--slurm and --shard were combined (--slurm gives each array task its --shard)")
	}
	budget, err := parseBudget(f.budget)
	if err != nil {
		return err
	}
	if budget > 0 && f.slurm {
		return usagef("--budget and --slurm were combined (a job array's time is sbatch's --time: --slurm-args)")
	}
	f.budgetDur = budget
	if f.cellsPerCall < 1 || f.cellsPerCall > maxCellsPerCall {
		return usagef("--cells-per-call %d is out of range (allowed: 1 to %d; 1 sends each cell on its own)", f.cellsPerCall, maxCellsPerCall)
	}
	if err := f.checkAhead(); err != nil {
		return err
	}
	return f.runOrSubmit(ctx, a, fs, folder)
}

func (f *sweepFlags) report(a *App, folder *sweep.Folder) error {
	if _, err := os.Stat(folder.Dir); err != nil {
		return usagef("--results %s: no sweep folder there (%v)", folder.Dir, err)
	}
	snap, err := sweep.Read(folder)
	if err != nil {
		return err
	}
	if f.csv {
		for _, e := range snap.Invalid {
			fmt.Fprintf(a.Stderr, "xbench sweep: left out of the CSV: %v\n", e.Err)
		}
		return sweep.WriteCSV(a.Stdout, snap)
	}
	return sweep.WriteStatus(a.Stdout, snap)
}

func clearFailures(a *App, folder *sweep.Folder) error {
	lock, err := sweep.LockFolder(folder.Dir, 0, 1)
	if err != nil {
		return err
	}
	defer lock.Release()
	removed, err := folder.ClearFailures()
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "removed %d failed, timeout, skipped or invalid cells from %s; rerun the sweep to run them again\n", len(removed), folder.Dir)
	return nil
}

// sweepRegistry opens the backends with a logger of its own: what plugins
// print goes to tails (for failed cells) and, at --log-level, to out.
func (a *App) sweepRegistry(c *commonFlags, out io.Writer, tails *sweep.Tails) (*registry.Registry, string, error) {
	// Trace on the logger itself, so go-plugin passes every line on; each
	// sink filters for itself.
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "xbench", Output: io.Discard, Level: hclog.Trace})
	logger.RegisterSink(sweep.Quiet(hclog.NewSinkAdapter(&hclog.LoggerOptions{Name: "xbench", Output: out, Level: hclog.LevelFromString(c.logLevel)})))
	logger.RegisterSink(tails)
	return a.openRegistryWith(c, logger)
}

func (f *sweepFlags) runOrSubmit(ctx context.Context, a *App, fs *pflag.FlagSet, folder *sweep.Folder) error {
	pinned, err := f.pinned()
	if err != nil {
		return err
	}
	if err := f.c.checkWritable(); err != nil {
		return err
	}
	if err := checkFolderMode(folder.Dir, f.m.mode()); err != nil {
		return err
	}
	shard, shards := 0, 1
	if f.shard != "" {
		if shard, shards, err = sweep.ParseShard(f.shard); err != nil {
			return usagef("%v", err)
		}
	}
	gpus := []string{pinned}
	if f.gpus != "" {
		if gpus, err = sweep.SplitList("gpus", f.gpus); err != nil {
			return usagef("%v", workload.Cut(err.Error(), 200))
		}
		for _, g := range gpus {
			if !gpuID.MatchString(g) {
				return usagef("--gpus %q is not a GPU id (allowed: a comma list of device indexes such as 0,1 or GPU-/MIG- UUIDs)", workload.Cut(g, 80))
			}
		}
	}
	terminal := sweep.IsTerminal(a.Stderr) && !f.slurm
	progress := sweep.NewProgress(a.Stderr, terminal)
	runID := newRunID()
	var workers []sweep.Worker
	defer func() {
		for _, w := range workers {
			w.Exec.Close()
		}
	}()
	var meta bench.Meta
	var root string
	var reg0 *registry.Registry
	var helperMeta bench.Meta
	var helperEnv []string
	for i, gpu := range gpus {
		tails := sweep.NewTails()
		reg, r, err := a.sweepRegistry(&f.c, progress, tails)
		if err != nil {
			return err
		}
		var env []string
		name := ""
		if gpu != "" {
			env, name = sweep.PinEnv(gpu), "gpu "+gpu
		}
		if i == 0 {
			meta, root, reg0 = sessionMeta(r, reg), r, reg
		}
		m, env := withRocm(meta, env, f.w.deviceKinds()...)
		if i == 0 {
			helperMeta, helperEnv = m, env
		}
		sess := bench.NewSession(reg, runID, m, env)
		sess.Mode, sess.StartTimeout = f.m.mode(), f.c.startTimeout
		workers = append(workers, sweep.Worker{Name: name, Exec: sess, Tails: tails})
	}
	// the configurations are checked before any backend starts, so bad
	// input costs no backend start; the plan is made again for the backends found
	if _, err := f.cells(fs, nil); err != nil {
		return err
	}
	names, err := selectBackends(ctx, a, reg0, workers[0].Exec.(*bench.Session), f.c.backends, f.c.startBound(), f.w.w.Name())
	if err != nil {
		return err
	}
	plan, err := f.cells(fs, names)
	if err != nil {
		return err
	}
	if f.gpus == "" {
		warnGPUSizedDefaults(a, fs, f.w.w, f.w.device) // after every input is checked: a refusal stays one line
	}
	if f.slurm {
		return f.submit(a, fs, folder, plan, root)
	}
	opts := sweep.Options{Timeout: f.c.timeout, Force: f.force,
		Shard: shard, Shards: shards, Progress: progress, Budget: f.budgetDur, CellsPerCall: f.cellsPerCall}
	if f.compileAhead > 0 {
		helperTails := sweep.NewTails() // helpers' output stays out of the timed cells' tails
		hreg, _, err := a.sweepRegistry(&f.c, progress, helperTails)
		if err != nil {
			return err
		}
		hmeta, henv := helperMeta, helperEnv // the one worker's: same GPU, same ROCm settings
		opts.Ahead = &sweep.Ahead{Helpers: f.compileAhead, Class: aheadClasses(hreg, names), Mode: f.m.mode(),
			NewHelper: func() sweep.Compiler {
				s := bench.NewSession(hreg, runID, hmeta, henv)
				s.Mode, s.StartTimeout = f.m.mode(), f.c.startTimeout
				return s
			}}
	}
	sum, err := sweep.Run(ctx, folder, plan, workers, opts)
	if err == nil || errors.Is(err, context.Canceled) {
		// Interrupted or not, the cells that have files get their table.
		if werr := writeSweepWinners(a, folder); werr != nil {
			fmt.Fprintf(a.Stderr, "sweep: summary table: %v\n", werr)
		}
	}
	if errors.Is(err, context.Canceled) {
		left := sum.Planned - sum.Existing
		for _, n := range sum.Written {
			left -= n
		}
		return &ExitError{Code: 130, Msg: fmt.Sprintf("sweep interrupted with %d cells left; rerun the same command to finish them", left)}
	}
	if err != nil {
		return err
	}
	if n := sum.LeftCount(); n > 0 {
		fmt.Fprintf(a.Stderr, "sweep: the --budget of %s ran out with %d of %d cells not begun (%s); the cheapest ran first; rerun the same command to run them\n",
			f.budgetDur, n, sum.Planned, leftText(sum.Left))
	}
	fmt.Fprintf(a.Stderr, "results in %s (%d already there, %s); see xbench sweep --results %s --status or --csv\n",
		folder.Dir, sum.Existing, writtenText(sum.Written), folder.Dir)
	return nil
}

// checkAhead refuses --compile-ahead where it cannot work: helpers compile
// into the persistent compile cache, which the timing process must share,
// and one timing worker keeps "nothing timed while a GPU compile runs" a
// property of one schedule.
func (f *sweepFlags) checkAhead() error {
	const allowed = "allowed: 0 to 16 helper processes per backend"
	switch {
	case f.compileAhead < 0 || f.compileAhead > 16:
		return usagef("--compile-ahead %d is out of range (%s)", f.compileAhead, allowed)
	case f.compileAhead == 0:
		return nil
	case f.c.compileCache == "":
		return usagef("--compile-ahead %d needs --compile-cache DIR: the helpers compile into it and the timing process reads it", f.compileAhead)
	case f.slurm || f.shard != "":
		return usagef("--compile-ahead was combined with --slurm or --shard (allowed: a sweep of one process)")
	case strings.Contains(f.gpus, ","):
		return usagef("--compile-ahead was combined with --gpus %s (allowed: one GPU)", f.gpus)
	}
	return nil
}

// aheadClasses is how each selected backend compiles ahead, from its
// manifest (compile_ahead); backends that do not declare it compile where
// they are timed.
func aheadClasses(reg *registry.Registry, names []string) map[string]string {
	out := map[string]string{}
	for _, full := range names {
		name, _ := backend.SplitName(full)
		if m, ok := reg.Manifest(name); ok && m.CompileAhead != "" {
			out[name] = m.CompileAhead
		}
	}
	return out
}

var (
	_ sweep.Compiler      = (*bench.Session)(nil)
	_ sweep.BatchExecutor = (*bench.Session)(nil)
)

// defaultCellsPerCall is 1: batching cells was not faster on the H100
// (results/h100-batch/README.md: the llm suite on pytorch and burnstyle-hip,
// within the spread of two runs of the same path), since a call's round trip
// is small beside a cell's own time. One by one also keeps a shape's backends timed side by side, which a
// batch (a backend's next cells together) gives up. maxCellsPerCall bounds
// what a crash costs: its batch runs again cell by cell.
const (
	defaultCellsPerCall = 1
	maxCellsPerCall     = 1024
	// maxBudget bounds --budget: a sweep that may begin cells for a month
	// has no budget worth the name, and minutes beyond it overflow.
	maxBudget = 30 * 24 * time.Hour
)

// parseBudget reads --budget: minutes as a number, or a Go duration; "" is none.
func parseBudget(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	const allowed = "allowed: minutes as a number, e.g. 15, or a duration such as 90s or 1h30m; more than 0 and at most 30 days"
	d, err := time.ParseDuration(v)
	if err != nil {
		m, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, usagef("--budget %q is not a time (%s)", workload.Cut(v, 40), allowed)
		}
		// Checked as minutes, before the conversion: 1e300 minutes overflows
		// a Duration (it read as negative, "not positive"), NaN compares false.
		if !(m > 0) {
			return 0, usagef("--budget %q is not positive (%s)", workload.Cut(v, 40), allowed)
		}
		if m > maxBudget.Minutes() {
			return 0, usagef("--budget %q is too large (%s)", workload.Cut(v, 40), allowed)
		}
		d = time.Duration(m * float64(time.Minute))
	}
	if d <= 0 {
		return 0, usagef("--budget %q is not positive (%s)", workload.Cut(v, 40), allowed)
	}
	if d > maxBudget {
		return 0, usagef("--budget %q is too large (%s)", workload.Cut(v, 40), allowed)
	}
	return d, nil
}

// leftText is "jax 120, triton 129": the cells the budget left, by backend.
func leftText(left map[string]int) string {
	names := make([]string, 0, len(left))
	for b := range left {
		names = append(names, b)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, b := range names {
		parts[i] = fmt.Sprintf("%s %d", b, left[b])
	}
	return strings.Join(parts, ", ")
}

func writtenText(w map[result.Status]int) string {
	var parts []string
	for _, st := range sweep.Statuses {
		if w[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", w[st], st))
		}
	}
	if len(parts) == 0 {
		return "nothing new"
	}
	return "new: " + strings.Join(parts, ", ")
}

// submit writes the effective sweep (flags and file, paths made absolute)
// for the array tasks and hands the job to sbatch.
func (f *sweepFlags) submit(a *App, fs *pflag.FlagSet, folder *sweep.Folder, plan []sweep.Cell, root string) error {
	dir, err := filepath.Abs(folder.Dir)
	if err != nil {
		return fmt.Errorf("sweep folder %s: %w", folder.Dir, err)
	}
	values := map[string]any{}
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed && !notInFile[fl.Name] && !strings.HasPrefix(fl.Name, "slurm") && fl.Name != "results" && fl.Name != "plugin-path" {
			values[fl.Name] = fl.Value.String()
		}
	})
	var extra []string
	for _, p := range f.c.pluginPath {
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("--plugin-path %s: %w", p, err)
		}
		extra = append(extra, abs)
	}
	if len(extra) > 0 {
		values["plugin-path"] = extra
	}
	self, err := selfPath()
	if err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	tasks := min(f.slurmTasks, len(plan))
	if tasks < 1 {
		return usagef("--slurm-tasks %d is too small (allowed: 1 or more)", f.slurmTasks)
	}
	id, err := sweep.Submit(dir, values, plan, sweep.SlurmJob{Xbench: self, Root: root, WorkDir: cwd,
		Tasks: tasks, Force: f.force, Args: strings.Fields(f.slurmArgs)})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "submitted SLURM job %s: %d array tasks over %d cells into %s\n", id, tasks, len(plan), dir)
	fmt.Fprintf(a.Stdout, "follow it with: xbench sweep --results %s --status\n", dir)
	return nil
}

// writeSweepWinners prints the end-of-sweep table: per configuration (and
// device model) the fastest backend and its speed-up, with interval, over
// the default baseline (compare.DefaultBaseline, report's rule).
func writeSweepWinners(a *App, folder *sweep.Folder) error {
	snap, err := sweep.Read(folder)
	if err != nil {
		return err
	}
	var rs []result.Result
	var names []string
	for _, e := range snap.Cells {
		rs = append(rs, e.Result)
		names = append(names, e.Result.Backend)
	}
	ws := compare.Winners(rs, compare.DefaultBaseline(names))
	if len(ws) == 0 {
		return nil
	}
	fmt.Fprintln(a.Stdout)
	return compare.WriteWinners(a.Stdout, ws, compare.DefaultBaseline(names))
}
