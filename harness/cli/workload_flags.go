package cli

// Workload flags: derived from the workload's declared parameters, so a new
// workload brings its flags, help, validation and sweep axes with it.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/sweep"
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all" // registers every workload
)

// defaultWorkload is what a command runs without --workload.
const defaultWorkload = "ttt"

var (
	devices = backend.Devices
	// dtypes a calibration may measure the matmul peak of.
	dtypes = []string{"float32", "tf32", "bfloat16", "float16", "float64", "float8_e4m3"}
)

func oneOf(flag, value string, allowed []string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return usagef("%s %q is not allowed (allowed: %s)", flag, workload.Cut(value, 80), strings.Join(allowed, ", "))
}

// workloadFlags are the flags of the chosen workload plus the uniform ones.
// In list mode (sweep) every value may be a comma list: a sweep axis.
type workloadFlags struct {
	w                   workload.Workload
	list                bool
	name                string
	values              map[string]*string
	phase, device       string
	gpu                 string // the GPU --device pins, set by jobs
	shapes              string
	backward, innerOnly bool
	warmup, repeats     int
	limit               int // an Expander's limit flag (--max-problems)
}

// workloadArg finds --workload in args (or in a sweep file's "workload"
// key) before the flags are parsed, because the workload decides which
// flags exist.
func workloadArg(args []string) (workload.Workload, error) {
	name := defaultWorkload
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--workload="); ok {
			name = v
		} else if a == "--workload" && i+1 < len(args) {
			name = args[i+1]
		}
	}
	w, err := workload.Lookup(name)
	if err != nil {
		return nil, usagef("%s", err)
	}
	return w, nil
}

// register adds --workload, --phase (and the phase switches the workload
// has), one flag per parameter, --shapes for a workload with suites, and
// the timing and device flags. defaults overrides parameter defaults.
func (f *workloadFlags) register(fs *pflag.FlagSet, w workload.Workload, list bool, defaults map[string]string) {
	f.w, f.list, f.values = w, list, map[string]*string{}
	listed := func(help string) string {
		if list {
			return help + " (comma list)"
		}
		return help
	}
	fs.StringVar(&f.name, "workload", w.Name(), "workload: "+strings.Join(workload.Names(), ", ")+" (see xbench workloads)")
	fs.StringVar(&f.phase, "phase", w.Phases()[0], listed("phase: "+strings.Join(w.Phases(), ", ")))
	if slices.Contains(w.Phases(), workload.PhaseBackward) {
		fs.BoolVar(&f.backward, "backward", false, "same as --phase backward")
	}
	if slices.Contains(w.Phases(), workload.PhaseInnerOnly) {
		fs.BoolVar(&f.innerOnly, "inner-only", false, "same as --phase inner_only")
	}
	for _, p := range w.Params() {
		def := p.Default
		if d, ok := defaults[p.Name]; ok {
			def = d
		}
		f.values[p.Name] = fs.String(p.FlagName(), def, listed(fmt.Sprintf("%s: %s", p.Help, p.AllowedText())))
	}
	if s, ok := w.(workload.Suiter); ok {
		fs.StringVar(&f.shapes, "shapes", "", "run a set of shapes instead of one (a comma list is their union): "+s.SuiteHelp())
	}
	if e, ok := w.(workload.Expander); ok {
		name, help := e.LimitFlag()
		fs.IntVar(&f.limit, name, 0, help)
	}
	fs.IntVar(&f.warmup, "warmup", 3, "untimed calls after the first (compile) call")
	fs.IntVar(&f.repeats, "repeats", 10, "timed calls")
	fs.StringVar(&f.device, "device", "auto", listed("device: "+deviceAllowed))
}

// Job is one configuration on one requested device: Device is the kind
// the backend is asked for, GPU the one --device cuda:N pinned ("" for none).
type Job struct {
	Device, GPU string
	Config      result.Config
}

// jobs checks every flag once and expands lists and --shapes into the
// configurations to run, in flag order, without duplicates. Every error
// names the flag, the value (cut) and what is allowed: exit 2.
func (f *workloadFlags) jobs(fs *pflag.FlagSet) ([]Job, error) {
	phases := f.phase
	if f.backward || f.innerOnly {
		if f.backward && f.innerOnly {
			return nil, usagef("--backward and --inner-only were both given (allowed: one of them, or neither for forward)")
		}
		if fs.Changed("phase") {
			return nil, usagef("--phase and --backward/--inner-only were both given (allowed: one of them)")
		}
		phases = map[bool]string{true: workload.PhaseBackward, false: workload.PhaseInnerOnly}[f.backward]
	}
	gpu, err := f.pin()
	if err != nil {
		return nil, err
	}
	f.gpu = gpu
	params := f.w.Params()
	names := append([]string{"phase", "device"}, workload.FlagNames(f.w)...)
	texts := []string{phases, f.device}
	for _, p := range params {
		texts = append(texts, *f.values[p.Name])
	}
	lists := make([][]string, len(texts))
	for i, t := range texts {
		if !f.list {
			lists[i] = []string{t}
			continue
		}
		l, err := sweep.SplitList(strings.TrimPrefix(names[i], "--"), t)
		if err != nil {
			return nil, usagef("%s", workload.Cut(err.Error(), 200))
		}
		lists[i] = l
	}
	suite := []map[string]string{nil}
	if f.shapes != "" {
		// A comma list of specs is their union (--shapes square,llm).
		suite = nil
		for _, spec := range strings.Split(f.shapes, ",") {
			got, err := f.w.(workload.Suiter).Suite(strings.TrimSpace(spec))
			if err != nil {
				return nil, usagef("--shapes %q: %v", workload.Cut(spec, 80), err)
			}
			suite = append(suite, got...)
		}
	}
	if f.limit < 0 {
		name, _ := f.w.(workload.Expander).LimitFlag()
		return nil, usagef("--%s %d is not allowed (allowed: 0 for all, or a positive count)", name, f.limit)
	}
	seen := map[string]bool{}
	var out []Job
	err = sweep.Product(lists, func(v []string) error {
		kind, gpu, err := parseDevice(v[1])
		if err != nil {
			return err
		}
		for _, shape := range suite {
			set := map[string]string{}
			for i, p := range params {
				set[p.Name] = v[2+i]
			}
			for k, val := range shape {
				set[k] = val
			}
			sets := []map[string]string{set}
			if e, ok := f.w.(workload.Expander); ok {
				var err error
				if sets, err = e.Expand(set, f.limit); err != nil {
					return err
				}
			}
			for _, set := range sets {
				cfg, err := workload.Resolve(f.w, v[0], set, f.warmup, f.repeats)
				if err != nil {
					return err
				}
				key := workload.Key(cfg) + "@" + kind
				if !seen[key] { // "1b" and "1.3b" are one configuration
					seen[key] = true
					out = append(out, Job{Device: kind, GPU: gpu, Config: cfg})
				}
			}
		}
		return nil
	})
	return out, err
}

// one returns the single configuration of a command that runs one (verify,
// profile); --shapes is refused there.
func (f *workloadFlags) one(fs *pflag.FlagSet) (Job, error) {
	jobs, err := f.jobs(fs)
	if err != nil {
		return Job{}, err
	}
	if len(jobs) != 1 {
		return Job{}, usagef("--shapes %q gives %d configurations (allowed here: one)", workload.Cut(f.shapes, 80), len(jobs))
	}
	return jobs[0], nil
}

// parseFlags parses args, turning pflag's errors into usage errors and
// --help into printed usage.
func parseFlags(a *App, fs *pflag.FlagSet, args []string) (help bool, err error) {
	return parseFlagsHelp(a, fs, args, "")
}

// parseFlagsHelp is parseFlags whose --help ends with footer (exit
// statuses, notes), when it is not empty.
func parseFlagsHelp(a *App, fs *pflag.FlagSet, args []string, footer string) (help bool, err error) {
	fs.SetOutput(a.Stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			fmt.Fprintf(a.Stdout, "Usage of xbench %s:\n%s%s%s", fs.Name(), fs.FlagUsages(), footer, workloadFlagsHelp(fs))
			return true, nil
		}
		return false, usagef("%s (see xbench %s --help)", workload.Cut(err.Error(), 200), fs.Name())
	}
	if fs.NArg() > 0 {
		return false, usagef("unexpected argument %q (xbench %s takes flags only)", workload.Cut(fs.Arg(0), 80), fs.Name())
	}
	return false, checkResultsFlag(fs)
}

// resultsParam is --results checked by the rule of the problem workload's
// --problems (a workload.String: valid UTF-8, no control characters, a
// bounded length): a newline in a folder name splits every line that
// names it, in logs, errors and the results' paths.
var resultsParam = workload.Param{Name: "results", Kind: workload.String, MaxLen: 4096}

// checkResultsFlag refuses a --results value resultsParam does not allow,
// for every command that has the flag (parseFlags and parseFlagsArgs call
// it); an empty value is left to the command, which says what it needs.
func checkResultsFlag(fs *pflag.FlagSet) error {
	f := fs.Lookup("results")
	if f == nil || f.Value.String() == "" {
		return nil
	}
	if _, err := resultsParam.Canonical(f.Value.String()); err != nil {
		return usagef("%s", err)
	}
	return nil
}

// workloadFlagsHelp ends every command's --help by saying where the
// workload flags live: a command with --workload lists only that
// workload's (ttt by default), so it names how to see another's; a command
// that reads results has none and says which commands do.
func workloadFlagsHelp(fs *pflag.FlagSet) string {
	if wf := fs.Lookup("workload"); wf != nil {
		return fmt.Sprintf("\nThe workload flags above are those of --workload %s. Each workload has its own:\n"+
			"xbench %s --workload NAME --help lists NAME's (xbench workloads lists the workloads and their flags).\n", wf.Value, fs.Name())
	}
	return "\nWorkload flags (model size, shapes, dtype, ...) belong to run, sweep, verify and profile:\n" +
		"xbench run --workload NAME --help lists NAME's; xbench workloads lists them all.\n"
}
