package cli

// The sweep's axes: flags and a sweep file expanded into cells.

import (
	"cmp"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/sweep"
	"github.com/xbench/xbench/harness/workload"
)

func hasHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}

// applyFile sets every flag the sweep file names and the command line did not.
func (f *sweepFlags) applyFile(fs *pflag.FlagSet) error {
	if f.config == "" {
		return nil
	}
	var allowed []string
	fs.VisitAll(func(fl *pflag.Flag) {
		if !notInFile[fl.Name] {
			allowed = append(allowed, fl.Name)
		}
	})
	values, err := sweep.LoadFile(f.config, allowed)
	if err != nil {
		return usagef("--config %s: %v", f.config, err)
	}
	for k, v := range values {
		if fs.Changed(k) {
			continue
		}
		if err := fs.Set(k, v); err != nil {
			return usagef("--config %s: key %q: value %q: %v", f.config, k, v, err)
		}
	}
	return nil
}

// cells expands the axes into the ordered plan, checking every combination
// the way `xbench run` checks its flags (one validation: workload.Resolve).
func (f *sweepFlags) cells(fs *pflag.FlagSet, names []string) ([]sweep.Cell, error) {
	jobs, err := f.w.jobs(fs)
	if err != nil {
		return nil, err
	}
	if f.perBucket < 0 {
		return nil, usagef("--per-bucket %d is not allowed (allowed: 0 for every configuration, or the number to time per bucket)", f.perBucket)
	}
	if b, ok := f.w.w.(workload.Bucketer); ok && f.perBucket > 0 {
		jobs = sampleBuckets(jobs, b, f.perBucket)
	}
	var out []sweep.Cell
	for _, j := range jobs {
		for _, name := range names {
			out = append(out, sweep.Cell{Backend: name, Device: j.Device, Config: j.Config})
		}
	}
	sweep.Order(out)
	return out, nil
}

// sweepWorkload is the workload of a sweep: --workload, else the sweep
// file's "workload" key, else the default.
func sweepWorkload(args []string) (workload.Workload, error) {
	for i, a := range args {
		if a == "--workload" || strings.HasPrefix(a, "--workload=") {
			return workloadArg(args)
		}
		path, ok := strings.CutPrefix(a, "--config=")
		if !ok && a == "--config" && i+1 < len(args) {
			path, ok = args[i+1], true
		}
		if ok {
			values, err := sweep.LoadFile(path, nil)
			if err == nil {
				return workloadArg([]string{"--workload", cmp.Or(values["workload"], defaultWorkload)})
			}
		}
	}
	return workloadArg(args)
}

// sampleBuckets keeps n jobs of each bucket (device and workload.Bucket):
// the largest by rank, whose compile at the bucket's canonical shape the
// rest can reuse, then evenly spaced down to the smallest. Jobs keep their
// flag order; the plan is ordered by cost afterwards as always.
func sampleBuckets(jobs []Job, b workload.Bucketer, n int) []Job {
	groups := map[string][]int{}
	var order []string
	for i, j := range jobs {
		key := j.Device + "|" + j.GPU + "|" + b.Bucket(j.Config)
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], i)
	}
	keep := make([]bool, len(jobs))
	for _, key := range order {
		idx := groups[key]
		sort.SliceStable(idx, func(x, y int) bool {
			return workload.RankOf(jobs[idx[x]].Config) > workload.RankOf(jobs[idx[y]].Config)
		})
		if n >= len(idx) {
			for _, i := range idx {
				keep[i] = true
			}
			continue
		}
		for k := 0; k < n; k++ {
			pos := 0
			if n > 1 {
				pos = (k*(len(idx)-1) + (n-1)/2) / (n - 1)
			}
			keep[idx[pos]] = true
		}
	}
	var out []Job
	for i, j := range jobs {
		if keep[i] {
			out = append(out, j)
		}
	}
	return out
}
