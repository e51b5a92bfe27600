package cli

// xbench problems: KernelBench-format problem sets (docs/workloads/problem.md).
// baseline and candidates are sweeps of the problem workload (one cell per
// problem: isolation, per-cell timeout, restart, resume); baseline then
// writes KernelBench's baseline files, score reads one back and gives fast_p.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/problems"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/sweep"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/problem"
)

const problemsHelp = `xbench problems <baseline|candidates|score> [flags]
  baseline    time the set on pytorch (eager) and its compile variants, write KernelBench baseline files
  candidates  gate and time ModelNew files of --candidates DIR against the set
  score       fast_0, fast_1, fast_2 and the fast_p curve per level against a baseline file
`

var hardwareName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func problemsCmd(ctx context.Context, a *App, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(a.Stdout, problemsHelp)
		if len(args) == 0 {
			return usagef("xbench problems needs a subcommand (allowed: baseline, candidates, score)")
		}
		return nil
	}
	switch args[0] {
	case "baseline":
		return problemsBaseline(ctx, a, args[1:])
	case "candidates":
		return problemsCandidates(ctx, a, args[1:])
	case "score":
		return problemsScore(a, args[1:])
	}
	return usagef("xbench problems %q is not a subcommand (allowed: baseline, candidates, score)", workload.Cut(args[0], 80))
}

// problemFlags are the flags baseline and candidates share.
type problemFlags struct {
	c      commonFlags
	w      workloadFlags
	m      modeFlags
	force  bool
	method string
}

// problemMethods are the values of --method: how each problem is timed.
// kernelbench is KernelBench's own method (problems.KernelBenchMethod):
// its timer in the backend (XBENCH_METHOD), cold L2, 4 untimed calls.
var problemMethods = []string{"xbench", "kernelbench"}

func (f *problemFlags) register(fs *pflag.FlagSet, backends, results string, repeats int) {
	f.c.register(fs)
	f.c.backends, f.c.resultsDir = backends, results
	fs.Lookup("backends").DefValue, fs.Lookup("results").DefValue = backends, results
	fs.Lookup("results").Usage = "sweep folder: one file per problem and backend, kept for reruns (resumable)"
	w, _ := workload.Lookup(problem.Name)
	f.w.register(fs, w, true, map[string]string{"level": "1,2"})
	f.m.register(fs, w)
	f.w.repeats = repeats
	fs.Lookup("repeats").DefValue = strconv.Itoa(repeats)
	fs.BoolVar(&f.force, "force", false, "run every cell again, even those with a file")
	fs.StringVar(&f.method, "method", "xbench", "how each problem is timed: xbench (the device clock: CUPTI on NVIDIA) or kernelbench "+
		"(KernelBench's own, as its published baselines: CUDA events, a cold-L2 write before each sample not waited for, 4 untimed calls; "+
		"sets --cold-cache and --warmup 4)")
}

// applyMethod turns --method into the backends' environment and settings
// and the mode and warmup it implies; a --cold-cache=false or a --warmup
// given with --method kernelbench is refused, since the method is those.
func (f *problemFlags) applyMethod(fs *pflag.FlagSet) (env []string, settings map[string]string, err error) {
	if err := oneOf("--method", f.method, problemMethods); err != nil {
		return nil, nil, err
	}
	if f.method == "xbench" {
		return nil, nil, nil
	}
	if fs.Changed("cold-cache") && !f.m.coldCache {
		return nil, nil, usagef("--method kernelbench was combined with --cold-cache=false (allowed: KernelBench's method is cold; leave --cold-cache out)")
	}
	if fs.Changed("warmup") && f.w.warmup != problems.KernelBenchMethod.Warmup {
		return nil, nil, usagef("--method kernelbench was combined with --warmup %d (allowed: KernelBench's method makes %d untimed calls; leave --warmup out)", f.w.warmup, problems.KernelBenchMethod.Warmup)
	}
	f.m.coldCache, f.w.warmup = true, problems.KernelBenchMethod.Warmup
	return []string{"XBENCH_METHOD=" + f.method}, map[string]string{"XBENCH_METHOD": f.method}, nil
}

// sweep runs every problem on every backend as one sweep cell each and
// returns the folder. extraEnv and settings go to the backends and results.
func (f *problemFlags) sweep(ctx context.Context, a *App, fs *pflag.FlagSet, extraEnv []string, settings map[string]string) (*sweep.Folder, error) {
	methodEnv, methodSettings, err := f.applyMethod(fs)
	if err != nil {
		return nil, err
	}
	extraEnv, settings = append(extraEnv, methodEnv...), mergeSettings(settings, methodSettings)
	if err := f.c.checkWritable(); err != nil {
		return nil, err
	}
	if err := checkFolderMethod(f.c.resultsDir, f.method); err != nil {
		return nil, err
	}
	jobs, err := f.w.jobs(fs)
	if err != nil {
		return nil, err
	}
	// --device cuda:N pins the backends as sweep --gpus pins a worker.
	extraEnv = append(pinEnv(f.w.gpu), extraEnv...)
	if err := checkFolderMode(f.c.resultsDir, f.m.mode()); err != nil {
		return nil, err
	}
	folder := sweep.NewFolder(f.c.resultsDir)
	progress := sweep.NewProgress(a.Stderr, sweep.IsTerminal(a.Stderr))
	tails := sweep.NewTails()
	reg, root, err := a.sweepRegistry(&f.c, progress, tails)
	if err != nil {
		return nil, err
	}
	meta := sessionMeta(root, reg)
	meta.Settings = mergeSettings(meta.Settings, settings)
	var kinds []string
	if len(jobs) > 0 {
		kinds = []string{jobs[0].Device}
	}
	meta, extraEnv = withRocm(meta, extraEnv, kinds...)
	sess := bench.NewSession(reg, newRunID(), meta, extraEnv)
	sess.Mode, sess.StartTimeout = f.m.mode(), f.c.startTimeout
	defer sess.Close()
	names, err := selectBackends(ctx, a, reg, sess, f.c.backends, f.c.startBound(), problem.Name)
	if err != nil {
		return nil, err
	}
	var plan []sweep.Cell
	for _, j := range jobs {
		for _, n := range names {
			plan = append(plan, sweep.Cell{Backend: n, Device: j.Device, Config: j.Config})
		}
	}
	sweep.Order(plan)
	start := time.Now()
	sum, err := sweep.Run(ctx, folder, plan, []sweep.Worker{{Exec: sess, Tails: tails}},
		sweep.Options{Timeout: f.c.timeout, Force: f.force, Progress: progress})
	if errors.Is(err, context.Canceled) {
		return nil, &ExitError{Code: 130, Msg: "interrupted; rerun the same command to finish the set"}
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(a.Stderr, "%d cells (%d problems x %d backends) in %s: %d already there, %s; took %.1fs\n",
		len(plan), len(jobs), len(names), folder.Dir, sum.Existing, writtenText(sum.Written), time.Since(start).Seconds())
	return folder, nil
}

// checkFolderMethod refuses a results folder holding problem results of
// another --method (read from their env.settings; none is xbench): a
// resumed sweep would take them as done, as checkFolderMode says of modes.
func checkFolderMethod(dir, method string) error {
	rs, _, err := store.ReadAll(dir)
	if err != nil {
		return err
	}
	for _, r := range rs {
		got := r.Env.Settings["XBENCH_METHOD"]
		if got == "" {
			got = "xbench"
		}
		if r.Config.Workload == problem.Name && got != method {
			return usagef("--results %q holds problem results timed by --method %s and this sweep times by --method %s (allowed: a folder of one method; use another --results)",
				workload.Cut(dir, 80), got, method)
		}
	}
	return nil
}

func mergeSettings(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func problemsBaseline(ctx context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("problems baseline", pflag.ContinueOnError)
	var f problemFlags
	var hardware, out string
	f.register(fs, strings.Join(problems.Backends[:2], ","), "", 100)
	fs.StringVar(&hardware, "hardware", "", "name of this hardware: the folder results/timing/<NAME> (letters, digits, . _ -)")
	fs.StringVar(&out, "out", "", "where the baseline files go (default results/timing/<hardware>)")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if !hardwareName.MatchString(hardware) {
		return usagef("--hardware %q is not allowed (allowed: 1 to 64 letters, digits, '.', '_', '-', e.g. H100_80GB)", workload.Cut(hardware, 80))
	}
	for _, b := range strings.Split(f.c.backends, ",") {
		if _, ok := problems.Files[strings.TrimSpace(b)]; !ok {
			return usagef("--backends %q: %q has no baseline file (allowed: %s)", workload.Cut(f.c.backends, 80), workload.Cut(b, 80), strings.Join(problems.Backends, ", "))
		}
	}
	if !fs.Changed("results") {
		f.c.resultsDir = filepath.Join("results", "problems", hardware)
	}
	if out == "" {
		out = filepath.Join("results", "timing", hardware)
	}
	folder, err := f.sweep(ctx, a, fs, nil, nil)
	if err != nil {
		return err
	}
	snap, err := sweep.Read(folder)
	if err != nil {
		return err
	}
	var rs []result.Result
	for _, e := range snap.Cells {
		rs = append(rs, e.Result)
	}
	for _, e := range snap.Invalid {
		// unreadable, or ok with samples that cannot be trusted: named, never in the baseline
		fmt.Fprintf(a.Stderr, "not in the baseline: %s\n", workload.Cut(e.Err.Error(), 300))
	}
	files, skipped := problems.FromResults(rs)
	for _, s := range skipped {
		fmt.Fprintf(a.Stderr, "not in the baseline: %s\n", workload.Cut(s, 300))
	}
	paths, err := problems.WriteAll(out, files)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintln(a.Stdout, p)
	}
	if len(paths) == 0 {
		return &ExitError{Code: 1, Msg: "no problem finished ok: no baseline file written"}
	}
	return nil
}

func problemsCandidates(ctx context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("problems candidates", pflag.ContinueOnError)
	var f problemFlags
	var dir string
	var atol, rtol float64
	var trials int
	f.register(fs, "candidates", filepath.Join(defaultResults, "candidates"), 100)
	fs.StringVar(&dir, "candidates", "", "folder of level<N>/<problem file name>.py files defining ModelNew")
	fs.Float64Var(&atol, "atol", 1e-2, "gate: absolute tolerance of allclose against the eager Model")
	fs.Float64Var(&rtol, "rtol", 1e-2, "gate: relative tolerance of allclose against the eager Model")
	fs.IntVar(&trials, "gate-trials", 3, "gate: seeded inputs compared before timing")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if st, e := os.Stat(dir); dir == "" || err != nil || e != nil || !st.IsDir() {
		return usagef("--candidates %q is not a folder (allowed: a folder of level<N>/ folders of ModelNew files)", workload.Cut(dir, 80))
	}
	for _, t := range []struct {
		flag string
		v    float64
	}{{"--atol", atol}, {"--rtol", rtol}} {
		if !(t.v >= 0 && t.v <= 1e6) {
			return usagef("%s %v is not allowed (allowed: 0 to 1e6)", t.flag, t.v)
		}
	}
	if trials < 1 || trials > 1000 {
		return usagef("--gate-trials %d is not allowed (allowed: 1 to 1000)", trials)
	}
	env := []string{"XBENCH_CANDIDATES=" + abs, "XBENCH_CANDIDATES_ATOL=" + strconv.FormatFloat(atol, 'g', -1, 64),
		"XBENCH_CANDIDATES_RTOL=" + strconv.FormatFloat(rtol, 'g', -1, 64), "XBENCH_CANDIDATES_TRIALS=" + strconv.Itoa(trials)}
	settings := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		settings[k] = v
	}
	folder, err := f.sweep(ctx, a, fs, env, settings)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "results in %s; score them with xbench problems score --baseline FILE --results %s\n", folder.Dir, folder.Dir)
	return nil
}

func problemsScore(a *App, args []string) error {
	fs := pflag.NewFlagSet("problems score", pflag.ContinueOnError)
	var baseline, dir string
	var cross bool
	fs.StringVar(&baseline, "baseline", "", "a KernelBench baseline file (results/timing/<hardware>/baseline_time_torch.json)")
	fs.BoolVar(&cross, "cross-hardware", false, "score results of one device kind (cpu, gpu) against a baseline timed on the other")
	fs.StringVar(&dir, "results", filepath.Join(defaultResults, "candidates"), "folder of problem results to score (every backend in it)")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if baseline == "" {
		return usagef("--baseline \"\" is empty (allowed: a KernelBench baseline JSON file)")
	}
	b, err := problems.Read(baseline)
	if err != nil {
		return usagef("--baseline %q: %v", workload.Cut(baseline, 80), workload.Cut(err.Error(), 300))
	}
	if !store.IsTree(dir) {
		return usagef("--results %q is not a folder or archive (allowed: a folder of results, a .tar.gz archive of one)", workload.Cut(dir, 80))
	}
	rs, skipped, err := store.ReadAll(dir)
	if err != nil {
		return err
	}
	warnSkipped(a, skipped)
	if mixed := problems.CheckPrecision(b, rs); len(mixed) > 0 {
		return usagef("--baseline %q and --results %q are of different precision conventions: %s (allowed: results timed under the baseline's, --precision %s)",
			workload.Cut(baseline, 80), workload.Cut(dir, 80), strings.Join(mixed, "; "), b.Convention())
	}
	hw := problems.CheckHardware(b, rs)
	if len(hw.Kinds) > 0 && !cross {
		return usagef("--baseline %q was timed on another kind of device: %s (allowed: a baseline of the same device kind, or --cross-hardware to score across machines)",
			workload.Cut(baseline, 80), strings.Join(hw.Kinds, "; "))
	}
	for _, w := range slices.Concat(hw.Kinds, hw.Names) {
		fmt.Fprintf(a.Stderr, "warning: %s: speedups compare machines as well as kernels\n", w)
	}
	scores := problems.Score(b, rs)
	if len(scores) == 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("no problem results in %s to score", dir)}
	}
	base, timed, differ := problems.Methods(b, rs)
	if differ != "" {
		fmt.Fprintf(a.Stderr, "warning: the baseline and the results were timed by different methods (%s): speedups compare the methods as well as the kernels (--method kernelbench times as KernelBench's own files were)\n", differ)
	}
	fmt.Fprintf(a.Stdout, "baseline timed: %s\nresults timed: %s\n", strings.Join(base, "; "), strings.Join(timed, "; "))
	problems.WriteScores(a.Stdout, baseline, scores)
	return nil
}
