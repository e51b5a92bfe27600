package report

// Tick labels for a linear axis from zero (view.Panel.YFromZero), as the
// throughput-against-length charts use.

import (
	"fmt"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// plainTicks label a linear axis every 1, 2 or 5 times a power of ten,
// about five labels (gonum's default labels three, as "750.00"); with a
// peak, each label also gives its percent of it ("400 (51%)").
type plainTicks struct{ peak float64 }

func (pt plainTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) {
		return gplot.DefaultTicks{}.Ticks(lo, hi)
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/5)))
	step := mag
	for _, f := range []float64{1, 2, 5, 10} {
		if step = f * mag; (hi-lo)/step <= 6 {
			break
		}
	}
	var ts []gplot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		label := strconv.FormatFloat(v, 'g', -1, 64)
		if pt.peak > 0 && v > 0 {
			label += fmt.Sprintf(" (%.0f%%)", 100*v/pt.peak)
		}
		ts = append(ts, gplot.Tick{Value: v, Label: label})
	}
	return ts
}
