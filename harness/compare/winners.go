package compare

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/xbench/xbench/harness/result"
)

// DefaultBaseline is the one rule for the backend ratios are taken
// against when --baseline is not given, in run's table, the sweep's
// summary and report alike: pytorch (the eager reference implementation)
// when present, else the first by name.
func DefaultBaseline(backends []string) string {
	if slices.Contains(backends, "pytorch") {
		return "pytorch"
	}
	if len(backends) == 0 {
		return ""
	}
	return slices.Min(backends)
}

// Winner is the fastest backend of one configuration on one device model,
// and how much faster it is than the reference (the baseline, or the
// runner-up when the winner is the baseline) with the Hodges-Lehmann 95%
// interval of that speed-up.
type Winner struct {
	Config    result.Config
	Device    string // result.Device.Label
	Backend   string
	MedianMs  float64
	Reference string  // "" when no other backend finished
	SpeedUp   float64 // reference median / winner median
	Lo, Hi    float64 // 95% interval of the speed-up, NaN without one
	Backends  int     // backends that finished ok with a performance number
}

// Winners picks, per configuration and device model, the fastest of the
// results that finished ok with a performance number (result.IsPerformance).
func Winners(rs []result.Result, baseline string) []Winner {
	groups := map[string][]result.Result{}
	var keys []string
	for _, r := range rs {
		if r.Status != result.StatusOK || r.Stats == nil || r.Stats.MedianMs <= 0 || !r.IsPerformance() {
			continue
		}
		k := ConfigKey(r.Config) + "@" + r.Device.Model()
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []Winner
	for _, k := range keys {
		g := groups[k]
		slices.SortFunc(g, func(a, b result.Result) int {
			return cmp.Or(cmp.Compare(a.Stats.MedianMs, b.Stats.MedianMs), strings.Compare(a.Backend, b.Backend))
		})
		best := g[0]
		w := Winner{Config: best.Config, Device: best.Device.Label(), Backend: best.Backend, MedianMs: best.Stats.MedianMs,
			Lo: math.NaN(), Hi: math.NaN(), Backends: len(g)}
		var ref *result.Result
		for i := range g[1:] {
			if g[1+i].Backend == baseline {
				ref = &g[1+i]
			}
		}
		if ref == nil && len(g) > 1 {
			ref = &g[1]
		}
		if ref != nil {
			w.Reference, w.SpeedUp = ref.Backend, ref.Stats.MedianMs/best.Stats.MedianMs
			if lo, hi, ok := RatioCI(best.SamplesMs, ref.SamplesMs); ok {
				w.Lo, w.Hi = lo, hi
			}
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Winner) int {
		return cmp.Or(CompareConfigs(a.Config, b.Config), strings.Compare(a.Device, b.Device))
	})
	return out
}

// WriteWinners prints one line per configuration: the winner, its median,
// and its speed-up over the reference with the interval.
func WriteWinners(w io.Writer, ws []Winner, baseline string) error {
	if len(ws) == 0 {
		return nil
	}
	devices := map[string]bool{}
	for _, x := range ws {
		devices[x.Device] = true
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "configuration\twinner\tmedian ms\tspeed-up\t95% CI\tover\n"
	if len(devices) > 1 {
		head = "configuration\tdevice\twinner\tmedian ms\tspeed-up\t95% CI\tover\n"
	}
	fmt.Fprint(tw, head)
	for _, x := range ws {
		up, ci, over := "-", "-", "(no other backend finished)"
		if x.Reference != "" {
			up, over = fmt.Sprintf("%.2fx", x.SpeedUp), x.Reference
		}
		if !math.IsNaN(x.Lo) {
			ci = fmt.Sprintf("%.2fx-%.2fx", x.Lo, x.Hi)
		}
		dev := ""
		if len(devices) > 1 {
			dev = x.Device + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%.4g\t%s\t%s\t%s\n", Label(x.Config), dev, x.Backend, x.MedianMs, up, ci, over)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ref := "the runner-up"
	if baseline != "" {
		ref = baseline + " (the runner-up where " + baseline + " wins)"
	}
	_, err := fmt.Fprintf(w, "speed-up = median of %s / the winner's median; 95%% CI: Hodges-Lehmann, as xbench compare.\n"+
		"Only results that finished ok with a performance number (not an interpreter's time) count.\n", ref)
	return err
}
