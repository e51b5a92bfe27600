// Package history reads many result folders (one a night, say) and lines
// them up as series over commits: for every workload, backend,
// configuration, device and timing mode, one point per folder, ordered by
// commit date. A folder without the cell, or with a failed or unsupported
// one, is a point of its own kind, never a gap. step.go finds where a
// series changed level.
package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
)

// StatusMissing is the kind of a point whose folder has no result for the
// series: the cell was not run that night.
const StatusMissing result.Status = "missing"

// Run is one result folder: a commit measured once.
type Run struct {
	Dir    string
	Commit string    // the most common env.git_commit of its results ("" when none)
	Date   time.Time // the commit's date, or the newest result's timestamp (DateSource)
	// DateSource is "commit" when Date is the commit's date, "timestamp"
	// when the commit date was not known and the results' time stands in.
	DateSource string
	Results    int
}

// Point is one series in one run.
type Point struct {
	Run    int           // index into History.Runs
	Status result.Status // ok, unsupported, oom, failed, timeout, skipped or missing
	// Median and its 95% interval (ms), from harness/stats; NaN unless ok.
	Median, Lo, Hi float64
	N              int
	Message        string
}

// OK says whether the point has a median.
func (p Point) OK() bool { return p.Status == result.StatusOK && !math.IsNaN(p.Median) }

// Key names a series.
type Key struct {
	Workload, Backend, Config, Device string // Config: compare.ConfigKey; Device: result.Device.Label, the model (an H100 and an H200 are two series)
	Mode                              string // result.Mode.String()
}

// Series is one key over every run, a point per run in run order.
type Series struct {
	Key
	Label  string        // the configuration in a few words
	Config result.Config // of the newest result
	Points []Point
	Steps  []Step // from Detect, oldest first
}

// History is every series over the runs, runs ordered by date.
type History struct {
	Runs   []Run
	Series []*Series
	// DateNote says how runs were ordered when any commit date was unknown.
	DateNote string
	// Skipped names the files that were not valid results, with the reason.
	Skipped []string
}

// Options tune Build.
type Options struct {
	// CommitDate looks up a commit's date; nil or false: the run's newest
	// result timestamp orders it instead (and History.DateNote says so).
	CommitDate func(commit string) (time.Time, bool)
	Detect     DetectOptions
}

// Build reads each folder as one run and assembles the series.
func Build(dirs []string, opt Options) (*History, error) {
	h := &History{}
	type loaded struct {
		run Run
		rs  []result.Result
	}
	var runs []loaded
	for _, d := range dirs {
		rs, skipped, err := store.ReadAll(d)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		h.Skipped = append(h.Skipped, skipped...)
		if len(rs) == 0 && len(skipped) > 0 {
			return nil, fmt.Errorf("history: read %s: no valid results in it (%d skipped, first: %s)", d, len(skipped), skipped[0])
		}
		if len(rs) == 0 {
			return nil, fmt.Errorf("history: read %s: no results in it", d)
		}
		run, err := describe(d, rs, opt.CommitDate)
		if err != nil {
			return nil, err
		}
		runs = append(runs, loaded{run, rs})
	}
	slices.SortStableFunc(runs, func(a, b loaded) int { return a.run.Date.Compare(b.run.Date) })
	byKey := map[Key]*Series{}
	fallback := 0
	for i, l := range runs {
		h.Runs = append(h.Runs, l.run)
		if l.run.DateSource != "commit" {
			fallback++
		}
		// The newest result of a key in a folder stands for it (NewSet's rule).
		for _, r := range compare.NewSet(l.run.Dir, l.rs).Results {
			k := Key{Workload: r.Config.Workload, Backend: r.Backend, Config: compare.ConfigKey(r.Config),
				Device: r.Device.Label(), Mode: r.Mode.String()}
			s := byKey[k]
			if s == nil {
				s = &Series{Key: k}
				byKey[k] = s
				h.Series = append(h.Series, s)
			}
			s.Label, s.Config = compare.Label(r.Config), r.Config
			s.Points = append(s.Points, pointOf(i, r))
		}
	}
	if fallback > 0 {
		h.DateNote = fmt.Sprintf("%d of %d runs are ordered by their results' timestamp, not their commit's date (commit date not recorded or not found)", fallback, len(h.Runs))
	}
	for _, s := range h.Series {
		s.Points = fill(s.Points, len(h.Runs))
		s.Steps = Detect(s.Points, opt.Detect)
	}
	slices.SortFunc(h.Series, func(a, b *Series) int {
		return cmp.Or(cmp.Compare(a.Workload, b.Workload), compare.CompareConfigs(a.Config, b.Config),
			cmp.Compare(a.Device, b.Device), cmp.Compare(a.Mode, b.Mode), cmp.Compare(a.Backend, b.Backend))
	})
	return h, nil
}

// describe finds a folder's commit (its most common one) and date.
func describe(dir string, rs []result.Result, commitDate func(string) (time.Time, bool)) (Run, error) {
	run := Run{Dir: dir, Results: len(rs), DateSource: "timestamp"}
	count := map[string]int{}
	newest := ""
	for _, r := range rs {
		if r.Env.GitCommit != "" {
			count[r.Env.GitCommit]++
			if count[r.Env.GitCommit] > count[run.Commit] || count[r.Env.GitCommit] == count[run.Commit] && r.Env.GitCommit < run.Commit {
				run.Commit = r.Env.GitCommit
			}
		}
		newest = max(newest, r.Timestamp)
	}
	if commitDate != nil && run.Commit != "" {
		if t, ok := commitDate(run.Commit); ok {
			run.Date, run.DateSource = t, "commit"
			return run, nil
		}
	}
	t, err := time.Parse(time.RFC3339, newest)
	if err != nil {
		return run, fmt.Errorf("history: %s: no commit date and no valid result timestamp (%q)", dir, newest)
	}
	run.Date = t
	return run, nil
}

func pointOf(run int, r result.Result) Point {
	p := Point{Run: run, Status: r.Status, Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Message: r.Message}
	if r.Status == result.StatusOK && r.Stats != nil {
		p.Median, p.Lo, p.Hi, p.N = r.Stats.MedianMs, r.Stats.CI95LowMs, r.Stats.CI95HighMs, r.Stats.SampleCount
	}
	if r.Status == result.StatusOK && r.Stats == nil {
		p.Status, p.Message = result.StatusFailed, "ok without statistics"
	}
	return p
}

// fill puts the points in run order with a missing point for every run
// that has none.
func fill(pts []Point, runs int) []Point {
	out := make([]Point, runs)
	for i := range out {
		out[i] = Point{Run: i, Status: StatusMissing, Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	for _, p := range pts {
		out[p.Run] = p
	}
	return out
}
