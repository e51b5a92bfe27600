package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/units"
	"github.com/xbench/xbench/harness/workload"
)

// writeRunTable prints one row per result: where it ran, its median with
// the 95% interval, throughput, memory, and its ratio to the baseline (or
// to the fastest backend of the same configuration when none is named).
// With several configurations (--shapes) each row names its own.
func writeRunTable(w io.Writer, results []result.Result, baseline string) {
	byConfig := map[string][]result.Result{}
	for _, r := range results {
		k := workload.Key(r.Config)
		byConfig[k] = append(byConfig[k], r)
	}
	many := len(byConfig) > 1
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ratioHead := "vs fastest"
	if baseline != "" {
		ratioHead = "vs " + baseline
	}
	unit := "throughput"
	for _, r := range results {
		if r.ThroughputUnit != "" {
			unit = r.ThroughputUnit
			break
		}
	}
	head := "backend\tdevice\tstatus\tmedian ms\t95%% CI ms\t%s\tpeak mem\t%s\tnotes\n"
	// The timing mode gets a column once any result is not warm and eager,
	// so the default table stays as narrow as it was.
	modes := false
	for _, r := range results {
		modes = modes || !r.Mode.IsZero()
	}
	if modes {
		head = strings.Replace(head, "status\t", "status\tmode\t", 1)
	}
	if many {
		head = "configuration\t" + head
	}
	fmt.Fprintf(tw, head, unit, ratioHead)
	refNames := map[string]bool{}
	fallback := false
	for _, r := range results {
		refName, ref := ratioReference(byConfig[workload.Key(r.Config)], baseline)
		if refName != "" {
			refNames[refName] = true
		}
		dev := r.Device.Kind
		if r.Device.Name != "" {
			dev += " (" + r.Device.Name + ")"
		}
		median, ci, tps, ratio := "-", "-", "-", "-"
		if r.Stats != nil {
			median = fmt.Sprintf("%.3f", r.Stats.MedianMs)
			if stats.HasCI(*r.Stats) {
				ci = fmt.Sprintf("%.3f-%.3f", r.Stats.CI95LowMs, r.Stats.CI95HighMs)
			} else {
				ci = fmt.Sprintf("none (n=%d < 6)", r.Stats.SampleCount)
			}
			tps = fmt.Sprintf("%.4g", r.Throughput)
			if r.Throughput >= 1e4 {
				tps = fmt.Sprintf("%.0f", r.Throughput)
			}
			if ref > 0 {
				ratio = fmt.Sprintf("%.2fx", r.Stats.MedianMs/ref)
			}
		}
		var notes []string
		if c := r.FallbackClock(); c != "" {
			// first, so it is read before the ratio is trusted
			notes = append(notes, "FALLBACK CLOCK: "+c)
			fallback = true
		}
		notes = append(notes, r.Warnings...)
		if r.Message != "" {
			notes = append(notes, firstLine(r.Message))
		}
		if many {
			fmt.Fprintf(tw, "%s\t", workload.Label(r.Config))
		}
		status := string(r.Status)
		if modes {
			status += "\t" + r.Mode.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Backend, dev, status, median, ci, tps,
			units.Bytes(r.PeakMemoryBytes), ratio, strings.Join(notes, "; "))
	}
	tw.Flush()
	if fallback {
		fmt.Fprintln(w, "FALLBACK CLOCK: the framework's own clock, not the device clock (CUPTI): the sample includes host work the others leave out (env.timing says why; xbench doctor says how to fix it)")
	}
	switch {
	case baseline != "" && len(refNames) > 0:
		fmt.Fprintf(w, "ratio = median / median of %s (lower is faster)\n", baseline)
	case len(refNames) == 1 && !many:
		for n := range refNames {
			fmt.Fprintf(w, "ratio = median / median of %s (lower is faster)\n", n)
		}
	case len(refNames) > 0:
		fmt.Fprintln(w, "ratio = median / the fastest median of the same configuration (lower is faster)")
	}
}

// ratioReference is the median the ratio column divides by.
func ratioReference(results []result.Result, baseline string) (string, float64) {
	best, name := math.Inf(1), ""
	for _, r := range results {
		if r.Stats == nil {
			continue
		}
		if baseline != "" && r.Backend == baseline {
			return r.Backend, r.Stats.MedianMs
		}
		if baseline == "" && r.Stats.MedianMs < best {
			best, name = r.Stats.MedianMs, r.Backend
		}
	}
	if name == "" {
		return "", 0
	}
	return name, best
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 160 {
		line = line[:157] + "..."
	}
	return line
}
