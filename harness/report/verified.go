package report

import (
	"fmt"
	"strings"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/verify"
)

// What a chart may draw. A time enters a performance chart only when it is
// a performance number (result.IsPerformance: not the Triton interpreter's
// CPU time) and its backend did not fail verification on that
// configuration; such results are left out of every chart of the view,
// the heat maps say why in their cells, and every caption counts them.
// Series whose results were never verified are named so in the legend.

// Why a result is kept out of the charts.
const (
	hiddenVerifyFail = "verify FAIL"
	hiddenNotTimed   = "not timed" // interpreter or emulator: a correctness check only
)

// chartView is r (one device's view) with the results the charts must
// not draw hidden and each series named by how far it was verified.
func (r *Report) chartView() *Report {
	v := *r
	v.hidden = map[string]string{}
	rename := map[string]string{}
	for _, b := range r.Backends {
		rename[b] = b
		if len(r.Verify) == 0 || b == r.Baseline {
			continue // the page says nothing was verified; the baseline names the titles, its rows say
		}
		verified, total := 0, 0
		for _, c := range r.Configs {
			res, ok := r.Result(b, c)
			if !ok || res.Status != result.StatusOK || hiddenReason(r, res) != "" {
				continue // only what is drawn is named
			}
			total++
			if verdict, _, ok := r.Verification(res.Backend, res.Device.Kind, c); ok && verdict == verify.Pass {
				verified++
			}
		}
		switch {
		case total == 0 || verified == total:
		case verified == 0:
			rename[b] = b + " (not verified)"
		default:
			rename[b] = b + " (partly verified)"
		}
	}
	v.byConfig = map[string]map[string]result.Result{}
	for k, row := range r.byConfig {
		v.byConfig[k] = map[string]result.Result{}
		for b, res := range row {
			name := rename[b]
			v.byConfig[k][name] = res
			if reason := hiddenReason(r, res); reason != "" {
				v.hidden[name+"\x00"+k] = reason
			}
		}
	}
	v.Backends = nil
	for _, b := range r.Backends {
		v.Backends = append(v.Backends, rename[b])
	}
	if v.Baseline != "" {
		v.Baseline = rename[r.Baseline]
	}
	v.modelOf = map[string]string{}
	for b, m := range r.modelOf {
		v.modelOf[rename[b]] = m
	}
	return &v
}

func hiddenReason(r *Report, res result.Result) string {
	if res.Status != result.StatusOK {
		return ""
	}
	if !res.IsPerformance() {
		return hiddenNotTimed
	}
	if verdict, _, ok := r.Verification(res.Backend, res.Device.Kind, res.Config); ok && verdict != verify.Pass {
		return hiddenVerifyFail
	}
	return ""
}

// hiddenWhy is why backend's result on c is kept out of the charts, "" if
// it is not.
func (r *Report) hiddenWhy(backendName string, c result.Config) string {
	return r.hidden[backendName+"\x00"+compare.ConfigKey(c)]
}

// hiddenNote is the sentence every caption of a chart view ends with when
// it left results out.
func (r *Report) hiddenNote() string {
	count := map[string]int{}
	for _, why := range r.hidden {
		count[why]++
	}
	var parts []string
	if n := count[hiddenVerifyFail]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d failed verification", n))
	}
	if n := count[hiddenNotTimed]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d are interpreter or emulator times (not performance numbers)", n))
	}
	if len(parts) == 0 {
		return ""
	}
	return " Left out of this chart: " + strings.Join(parts, ", ") + " (they are in the tables)."
}
