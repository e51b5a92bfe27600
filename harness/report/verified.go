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
// Each point or bar that no passing verify covers is drawn hollow, the
// baseline's like any other's.

// Why a result is kept out of the charts.
const (
	hiddenVerifyFail = "verify FAIL"
	hiddenNotTimed   = "not timed" // interpreter or emulator: a correctness check only
)

// chartView is r (one device's view) with the results the charts must
// not draw hidden. Series keep their backend's name, the baseline's
// included: how far a series was verified is shown on each of its points
// (hollow: not verified), not by a suffix, which named only some series
// and lengthened every label that quoted it.
func (r *Report) chartView() *Report {
	v := *r
	v.hidden = map[string]string{}
	for k, row := range r.byConfig {
		for b, res := range row {
			if reason := hiddenReason(r, res); reason != "" {
				v.hidden[b+"\x00"+k] = reason
			}
		}
	}
	return &v
}

// hollowNote is what a hollow point or bar's tooltip says.
const hollowNote = "not verified"

// notVerified says whether series name's result on c is drawn hollow: no
// verify record that passed stands for it.
func (r *Report) notVerified(name string, c result.Config) bool {
	res, ok := r.Result(name, c)
	if !ok {
		return false
	}
	verdict, _, ok := r.verdictOf(res)
	return !ok || verdict != verify.Pass
}

// hollowCaption ends the caption of a chart that drew a hollow point or
// bar.
const hollowCaption = " A hollow point or bar, or a ratio cell in a dashed frame, was not verified: no passing xbench verify record (for a KernelBench candidate, its gate) covers it (or, for a ratio, the baseline's result) (the tables say which); a solid one passed."

func hiddenReason(r *Report, res result.Result) string {
	if res.Status != result.StatusOK {
		return ""
	}
	if !res.IsPerformance() {
		return hiddenNotTimed
	}
	if verdict, _, ok := r.verdictOf(res); ok && verdict != verify.Pass {
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
