// Package report turns a results folder into one self-contained HTML page
// with its charts also written as SVG and PNG files. data.go reads and
// indexes the folder, summary.go and fastp.go compute the tables,
// charts.go chooses what to draw (harness/plot draws it) and html.go lays
// the page out.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/verify"
)

// CalibrationFile is the name xbench calibrate stores its measurement
// under, in the run's folder beside the results.
const CalibrationFile = "_calibration.json"

// VerifyRecord is one _verify_*.json file and where it was found.
type VerifyRecord struct {
	verify.Record
	Path string `json:"-"`
}

// Report is a results folder, indexed.
type Report struct {
	Dir      string
	Results  []result.Result // newest per backend and configuration, in table order
	Backends []string        // sorted
	Configs  []result.Config // sorted by compare.CompareConfigs
	Baseline string
	Verify   []VerifyRecord
	// VerifyDirs are the folders the verify records were read from, as
	// the page names them: the results folder, a verify/ folder beside
	// it, and each --verify folder.
	VerifyDirs   []string
	Calibrations []backend.Calibration
	Superseded   int
	// Skipped names each file of the folder that was not a valid result
	// (or an ok one with untrustworthy samples), with the reason.
	Skipped     []string
	multiDevice bool
	modelOf     map[string]string                   // series -> result.Device.Model
	labelOf     map[string]string                   // device model -> result.Device.Label
	viewDevice  string                              // the device label of a deviceViews view, "" for the whole folder
	hidden      map[string]string                   // of a chartView: series and config key -> why it is not drawn
	byConfig    map[string]map[string]result.Result // config key -> backend -> result
	labels      map[string]string                   // config key -> its label, told apart from every other (distinctLabels)
	drewHollow  bool                                // of a chartView: the chart being built drew a hollow point or bar
}

// Load reads dir recursively. baseline names the backend ratios and fast_p
// are measured against (see SetBaseline); "" picks pytorch when present
// (the eager reference implementation) and otherwise the first by name.
func Load(dir, baseline string) (*Report, error) {
	set, err := compare.Load(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{Dir: dir, Superseded: set.Superseded, Skipped: set.Skipped, byConfig: map[string]map[string]result.Result{},
		modelOf: map[string]string{}, labelOf: map[string]string{}}
	for _, res := range set.Results {
		r.labelOf[res.Device.Model()] = res.Device.Label()
	}
	r.multiDevice = len(r.labelOf) > 1
	series := map[string]bool{}
	for _, res := range set.Results {
		r.Results = append(r.Results, res)
		name := r.Series(res)
		series[name] = true
		r.modelOf[name] = res.Device.Model()
		k := compare.ConfigKey(res.Config)
		if r.byConfig[k] == nil {
			r.byConfig[k] = map[string]result.Result{}
			r.Configs = append(r.Configs, res.Config)
		}
		r.byConfig[k][name] = res
	}
	for b := range series {
		r.Backends = append(r.Backends, b)
	}
	sort.Strings(r.Backends)
	slices.SortFunc(r.Configs, compare.CompareConfigs)
	r.labels = distinctLabels(r.Configs)
	slices.SortFunc(r.Results, func(a, b result.Result) int {
		if c := compare.CompareConfigs(a.Config, b.Config); c != 0 {
			return c
		}
		return strings.Compare(r.Series(a), r.Series(b))
	})
	if baseline == "" {
		var names []string
		for _, res := range r.Results {
			names = append(names, res.Backend)
		}
		baseline = compare.DefaultBaseline(names) // the rule run's table and the sweep's summary follow
	}
	if err := r.SetBaseline(baseline); err != nil {
		return nil, err
	}
	if err := r.loadSidecars(dir); err != nil {
		return nil, err
	}
	if len(r.Verify) > 0 {
		r.VerifyDirs = append(r.VerifyDirs, dir)
	}
	if beside := VerifyBeside(dir); beside != "" {
		if err := r.AddVerify(beside); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Series is the name a result is drawn and tabulated under: its backend,
// plus the device model when the folder holds more than one (a sweep over
// cpu and cuda, runs on an H100 and an H200), since those are different
// lines.
func (r *Report) Series(res result.Result) string {
	if r.multiDevice {
		return res.Backend + " (" + res.Device.Label() + ")"
	}
	return res.Backend
}

// ErrNoBaseline is SetBaseline's answer for a backend without results.
var ErrNoBaseline = errors.New("baseline has no results")

// SetBaseline picks the series ratios and fast_p compare against: a series
// name, or a backend name, which means its first series.
func (r *Report) SetBaseline(name string) error {
	for _, b := range r.Backends {
		if b == name || strings.HasPrefix(b, name+" (") {
			r.Baseline = b
			return nil
		}
	}
	return fmt.Errorf("report: %w: %q is not among %s (in %s)", ErrNoBaseline, name, strings.Join(r.Backends, ", "), r.Dir)
}

// loadSidecars reads the verify records and calibrations stored beside
// the results (files starting with "_"), in a folder or an archive.
func (r *Report) loadSidecars(dir string) error {
	t, err := store.OpenTree(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return fs.WalkDir(t.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		switch {
		case strings.HasPrefix(name, verify.FilePrefix) && strings.HasSuffix(name, ".json"):
			var v VerifyRecord
			if err := readMemberJSON(t, p, &v); err != nil {
				return err
			}
			v.Path = t.Path(p)
			r.Verify = append(r.Verify, v)
		case name == CalibrationFile:
			var c backend.Calibration
			if err := readMemberJSON(t, p, &c); err != nil {
				return err
			}
			r.Calibrations = append(r.Calibrations, c)
		}
		return nil
	})
}

// AddCalibration reads a _calibration.json kept outside the results
// folder (a calibration run on the same kind of device in another session)
// so the roofline and the percent of peak can use its ceilings.
func (r *Report) AddCalibration(path string) error {
	var c backend.Calibration
	if err := readJSON(path, &c); err != nil {
		return err
	}
	if c.Device.Kind == "" || len(c.MatmulTFLOPs) == 0 {
		return fmt.Errorf("report: %s is not a calibration (no device kind or matmul peaks)", path)
	}
	models := map[string]bool{}
	for _, res := range r.Results {
		if res.Device.Kind == c.Device.Kind && res.Device.Name == c.Device.Name {
			r.Calibrations = append(r.Calibrations, c)
			return nil
		}
		models[res.Device.Label()] = true
	}
	return fmt.Errorf("report: --calibration %s was measured on %s, but the results ran on %s: a calibration applies only to its own device model",
		path, c.Device.Label(), strings.Join(slices.Sorted(maps.Keys(models)), ", "))
}

// readJSON decodes the file at path, which may lie in an archive
// (store.ReadPath).
func readJSON(path string, v any) error {
	return decodeJSON(path, func() ([]byte, error) { return store.ReadPath(path, store.MaxFileBytes) }, v)
}

// readMemberJSON decodes the tree's member rel.
func readMemberJSON(t store.Tree, rel string, v any) error {
	return decodeJSON(t.Path(rel), func() ([]byte, error) { return t.Read(rel, store.MaxFileBytes) }, v)
}

// decodeJSON decodes what read returns, naming path in its errors.
func decodeJSON(path string, read func() ([]byte, error), v any) error {
	raw, err := read()
	if err != nil {
		return fmt.Errorf("report: read %s: %w", path, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("report: decode %s: %w", path, err)
	}
	return nil
}

// Result is backend's result on c, if any (in a chartView, none for a
// result the charts must not draw).
func (r *Report) Result(backendName string, c result.Config) (result.Result, bool) {
	res, ok := r.byConfig[compare.ConfigKey(c)][backendName]
	if ok && r.hidden[backendName+"\x00"+compare.ConfigKey(c)] != "" {
		return result.Result{}, false
	}
	return res, ok
}

// anyResult is Result including what a chartView hides: for the charts
// that show status, not time (the feasibility map).
func (r *Report) anyResult(backendName string, c result.Config) (result.Result, bool) {
	res, ok := r.byConfig[compare.ConfigKey(c)][backendName]
	return res, ok
}

// Calibration picks the calibration of the device model results ran on,
// the newest of that kind and name: an H100's ceilings are never an
// H200's, nor a GPU's a CPU's. The count does not matter, a calibration
// measures one device.
func (r *Report) Calibration(dev result.Device) (backend.Calibration, bool) {
	var best backend.Calibration
	found := false
	for _, c := range r.Calibrations {
		if c.Device.Kind != dev.Kind || c.Device.Name != dev.Name {
			continue
		}
		if !found || c.Timestamp > best.Timestamp {
			best, found = c, true
		}
	}
	return best, found
}
