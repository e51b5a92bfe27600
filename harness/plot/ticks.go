package plot

import (
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
)

// logTicks labels 1, 2 and 5 times each power of ten when the axis spans
// few decades (gonum's LogTicks labels powers of ten only, which leaves a
// one-decade timing axis with a single number) and only powers of ten
// when it spans many.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	labelled := map[int]bool{1: true, 2: true, 5: true}
	if last-first > 3 {
		labelled = map[int]bool{1: true}
	}
	var ticks []gplot.Tick
	for e := first; e <= last; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, float64(e))
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := gplot.Tick{Value: v}
			if labelled[m] {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes plain numbers where they stay short (0.001 to 1e6) and
// exponents beyond.
func tickLabel(v float64) string {
	if v >= 1e-3 && v < 1e7 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
