package profile

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/xbench/xbench/harness/backend"
)

// Row is one kernel (or the launch-overhead row) as printed.
type Row struct {
	Name     string
	Category Category
	Count    int64
	SelfMs   float64 // total over the profiled calls
	Share    float64 // percent of Summary.TotalMs
}

// Summary is a profile reduced to what is printed: the kernels ranked by
// self time, each category's total, and what the shares are shares of.
type Summary struct {
	Backend  string
	Report   backend.ProfileReport
	Kernels  []Row                // all kernels, largest self time first
	ByCat    map[Category]float64 // milliseconds per category, launch overhead included
	KernelMs float64              // the kernels' self times summed
	// LaunchMs is WallMs less KernelMs when the times are device times: the
	// host's share of the profiled calls (launches, Python, syncs) that no
	// kernel covers. Zero for host times, where it is not defined.
	LaunchMs float64
	// TotalMs is what shares are taken of: the wall time of the profiled
	// calls for device times (kernels plus launch overhead), the kernels'
	// sum for host times (host ops nest, and self times do not overlap).
	TotalMs float64
}

// Summarize ranks the report's kernels and adds up the categories.
func Summarize(name string, rep backend.ProfileReport) Summary {
	s := Summary{Backend: name, Report: rep, ByCat: map[Category]float64{}}
	for _, k := range rep.Kernels {
		if k.SelfMs <= 0 {
			continue // an op the profiler saw but gave no time (a view, an empty alloc)
		}
		c := Classify(k.Name)
		s.Kernels = append(s.Kernels, Row{Name: k.Name, Category: c, Count: k.Count, SelfMs: k.SelfMs})
		s.ByCat[c] += k.SelfMs
		s.KernelMs += k.SelfMs
	}
	slices.SortStableFunc(s.Kernels, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.SelfMs, a.SelfMs), cmp.Compare(a.Name, b.Name))
	})
	s.TotalMs = s.KernelMs
	if rep.TimeKind == backend.TimeDevice {
		s.LaunchMs = max(0, rep.WallMs-s.KernelMs)
		s.ByCat[Launch] = s.LaunchMs
		s.TotalMs = s.KernelMs + s.LaunchMs
	}
	for i := range s.Kernels {
		s.Kernels[i].Share = pct(s.Kernels[i].SelfMs, s.TotalMs)
	}
	return s
}

func pct(x, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * x / total
}

// Label is the words every profile figure carries: these are not timings.
func Label(profiler string) string {
	return fmt.Sprintf("profiled (under %s), not a timing: use xbench run for timings", profiler)
}

// timeWords says what the self times measure, for the header.
func timeWords(kind string) string {
	if kind == backend.TimeDevice {
		return "self device time (kernels on the device's streams)"
	}
	return "self host time (CPU time of host ops; no device kernels on this device)"
}

// Write prints the summary: a header with the label, the top kernels, then
// each category's share. top < 1 prints every kernel.
func (s Summary) Write(w io.Writer, top int) {
	r := s.Report
	label := Label(r.Profiler)
	fmt.Fprintf(w, "%s on %s: %s\n", s.Backend, deviceText(r), label)
	fmt.Fprintf(w, "  %d profiled calls, wall %.3f ms in all under the profiler; times are %s, summed over the calls\n",
		r.Calls, r.WallMs, timeWords(r.TimeKind))
	shown := s.Kernels
	if top > 0 && len(shown) > top {
		shown = shown[:top]
	}
	fmt.Fprintf(w, "  top %d of %d kernels by self time (%s):\n", len(shown), len(s.Kernels), label)
	const row = "  %14s %7s %7s  %-16s  %s\n"
	fmt.Fprintf(w, row, "profiled ms", "share", "count", "category", "kernel")
	for _, k := range shown {
		fmt.Fprintf(w, row, ms(k.SelfMs), share(k.Share), fmt.Sprint(k.Count), k.Category, cut(k.Name, 100))
	}
	if r.TimeKind == backend.TimeDevice {
		fmt.Fprintf(w, row, ms(s.LaunchMs), share(pct(s.LaunchMs, s.TotalMs)), "-", Launch, "(wall of the calls less the kernels' device time: host launch and idle gaps, and any device work the profiler saw no kernel for)")
	}
	fmt.Fprintf(w, "  share by category (%s):\n", label)
	const catRow = "  %14s %7s  %s\n"
	fmt.Fprintf(w, catRow, "profiled ms", "share", "category")
	for _, c := range Categories {
		if v, ok := s.ByCat[c]; ok {
			fmt.Fprintf(w, catRow, ms(v), share(pct(v, s.TotalMs)), c)
		}
	}
	if r.TracePath != "" {
		fmt.Fprintf(w, "  Chrome trace: %s (open in chrome://tracing or ui.perfetto.dev)\n", r.TracePath)
	}
}

func ms(v float64) string    { return fmt.Sprintf("%.3f", v) }
func share(v float64) string { return fmt.Sprintf("%.1f%%", v) }

func deviceText(r backend.ProfileReport) string {
	if r.Device.Name == "" {
		return r.Device.Kind
	}
	return r.Device.Kind + " (" + r.Device.Name + ")"
}

// cut shortens a C++ template kernel name for the table; the trace keeps it whole.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
