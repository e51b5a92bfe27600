package report

// The nightly dashboard: a static site drawn from a history (harness/history),
// one page per workload with a chart per configuration group (every backend
// of one configuration, device and timing mode) and a table of the latest
// steps linking to the result folders of the commits either side, an index
// page, and series.csv with every point. Every page inlines its charts and
// font, so the folder can be published anywhere as it is.

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/xbench/xbench/harness/history"
	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/result"
)

//go:embed dashboard.html.tmpl
var dashboardTemplate string

type dashGroup struct {
	ID, Title string
	Series    []*history.Series
	SVG       template.HTML
	// MinWidthPx and MaxWidthPx bound the chart's width in the page, as
	// the report's (pageChart): its smallest text never under 9 px.
	MinWidthPx, MaxWidthPx int
}

type dashStep struct {
	Series             *history.Series
	Step               history.Step
	FirstBad, LastGood history.Run
	GoodLink, BadLink  template.URL
	ChartLink          template.URL // the series' chart on its workload's page
}

// dashRun is a row of the runs table: the run and its folder.
type dashRun struct {
	history.Run
	Link template.URL
}

// Regression says whether the step made the series slower.
func (d dashStep) Regression() bool { return d.Step.Ratio > 1 }

type dashPage struct {
	LogY            bool
	Title, Workload string
	Workloads       []string
	Runs            []history.Run
	RunRows         []dashRun
	DateNote        string
	Groups          []dashGroup
	Steps           []dashStep
	FontCSS         template.CSS
	Newest          string
}

// DashboardOptions tune WriteDashboard.
type DashboardOptions struct {
	// LogY draws every chart's time axis on a log scale; otherwise a chart
	// whose values span more than a decade gets one (a linear axis would
	// flatten every backend but the slowest).
	LogY bool
}

// WriteDashboard writes index.html, <workload>.html and series.csv into
// dir and returns the files written.
func WriteDashboard(h *history.History, dir string, opt DashboardOptions) ([]string, error) {
	if len(h.Runs) == 0 {
		return nil, fmt.Errorf("dashboard: the history has no runs")
	}
	css, err := plot.FontFaceCSS()
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("dash").Funcs(funcs).Funcs(template.FuncMap{
		"short": func(c string) string { return shortHash(c, 10) },
		"date":  func(r history.Run) string { return r.Date.UTC().Format("2006-01-02 15:04") },
		"step":  func(s history.Step) string { return fmt.Sprintf("%+.1f%%", 100*(s.Ratio-1)) },
		"ci": func(s history.Step) string {
			return fmt.Sprintf("%+.1f%% to %+.1f%%", 100*(s.Lo-1), 100*(s.Hi-1))
		},
		"up": func(s history.Step) bool { return s.Ratio > 1 },
		"kind": func(d dashStep) string {
			if d.Regression() {
				return "regression"
			}
			return "improvement"
		},
		"list": func(xs ...string) []string { return xs },
	}).Parse(dashboardTemplate)
	if err != nil {
		return nil, fmt.Errorf("dashboard: parse template: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("dashboard: create %s: %w", dir, err)
	}
	byWorkload := map[string][]*history.Series{}
	var workloads []string
	for _, s := range h.Series {
		if byWorkload[s.Workload] == nil {
			workloads = append(workloads, s.Workload)
		}
		byWorkload[s.Workload] = append(byWorkload[s.Workload], s)
	}
	base := dashPage{Workloads: workloads, Runs: h.Runs, DateNote: h.DateNote, FontCSS: template.CSS(css), //nolint:gosec // a constant @font-face rule
		Newest: h.Runs[len(h.Runs)-1].Date.UTC().Format("2006-01-02 15:04")}
	for _, run := range h.Runs {
		base.RunRows = append(base.RunRows, dashRun{Run: run, Link: link(dir, run.Dir)})
	}
	// Every chart first, so each step's row can link to its chart.
	groupsOf := map[string][]dashGroup{}
	chartOf := map[*history.Series]template.URL{}
	for _, w := range workloads {
		groups, err := dashGroups(h, byWorkload[w], opt)
		if err != nil {
			return nil, err
		}
		groupsOf[w] = groups
		for _, g := range groups {
			for _, s := range g.Series {
				chartOf[s] = template.URL(url.PathEscape(w) + ".html#" + g.ID) //nolint:gosec // an escaped file name and an id we made
			}
		}
	}
	var files []string
	write := func(name string, pg dashPage) error {
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, pg); err != nil {
			return fmt.Errorf("dashboard: render %s: %w", name, err)
		}
		p := filepath.Join(dir, name)
		if err := writePublic(p, buf.Bytes()); err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
		files = append(files, p)
		return nil
	}
	index := base
	index.Title = "xbench nightly"
	index.Steps = latestSteps(h, h.Series, dir, chartOf)
	if err := write("index.html", index); err != nil {
		return nil, err
	}
	for _, w := range workloads {
		pg := base
		pg.Title, pg.Workload = "xbench nightly: "+w, w
		pg.Steps = latestSteps(h, byWorkload[w], dir, chartOf)
		pg.Groups = groupsOf[w]
		if err := write(w+".html", pg); err != nil {
			return nil, err
		}
	}
	var csv bytes.Buffer
	if err := h.WriteCSV(&csv); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "series.csv")
	if err := writePublic(p, csv.Bytes()); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return append(files, p), nil
}

// latestSteps is the newest step of every series that has one, newest first.
func latestSteps(h *history.History, series []*history.Series, dir string, chartOf map[*history.Series]template.URL) []dashStep {
	var out []dashStep
	for _, s := range series {
		if len(s.Steps) == 0 {
			continue
		}
		st := s.Steps[len(s.Steps)-1]
		out = append(out, dashStep{Series: s, Step: st, FirstBad: h.Runs[st.FirstBad], LastGood: h.Runs[st.LastGood],
			GoodLink: link(dir, h.Runs[st.LastGood].Dir), BadLink: link(dir, h.Runs[st.FirstBad].Dir), ChartLink: chartOf[s]})
	}
	// Newest first; among equals, the larger slowdown first.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (out[j].Step.FirstBad > out[j-1].Step.FirstBad ||
			out[j].Step.FirstBad == out[j-1].Step.FirstBad && out[j].Step.Ratio > out[j-1].Step.Ratio); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// link is a result folder relative to the dashboard, as a URL path (each
// segment escaped). Both are made absolute first, so an absolute --out
// with relative folders (or the reverse) still gives a relative link: a
// file:// URL is one html/template would refuse (#ZgotmplZ), and a relative
// one keeps working when dashboard and results are published together.
func link(dir, target string) template.URL {
	absDir, err1 := filepath.Abs(dir)
	absTarget, err2 := filepath.Abs(target)
	rel, err := filepath.Rel(absDir, absTarget)
	if err1 != nil || err2 != nil || err != nil {
		rel = target
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return template.URL(strings.Join(parts, "/") + "/") //nolint:gosec // a relative path, every segment escaped
}

// dashGroups draws one chart per configuration, device and mode.
func dashGroups(h *history.History, series []*history.Series, opt DashboardOptions) ([]dashGroup, error) {
	var groups []dashGroup
	index := map[string]int{}
	for _, s := range series {
		k := s.Key.Config + "@" + s.Device + "@" + s.Mode
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, dashGroup{ID: fmt.Sprintf("g%d", i), Title: fmt.Sprintf("%s on %s, %s", s.Label, s.Device, s.Mode)})
		}
		groups[i].Series = append(groups[i].Series, s)
	}
	for i := range groups {
		svg, w, err := dashChart(h, groups[i], opt)
		if err != nil {
			return nil, err
		}
		groups[i].SVG = template.HTML(plot.InlineSVG(svg)) //nolint:gosec // generated by gonum, text escaped by vgsvg
		groups[i].MinWidthPx = int(math.Ceil(w.Points() * minTextPx / plot.SmallestText(svg)))
		groups[i].MaxWidthPx = max(groups[i].MinWidthPx, int(math.Ceil(w.Points()*4/3)))
	}
	return groups, nil
}

// notOK are the point kinds drawn on the chart's floor, with their glyphs.
var notOK = []struct {
	name     string
	statuses []result.Status
	glyph    draw.GlyphDrawer
}{
	{"failed, oom, timeout", []result.Status{result.StatusFailed, result.StatusOOM, result.StatusTimeout}, draw.CrossGlyph{}},
	{"unsupported, skipped", []result.Status{result.StatusUnsupported, result.StatusSkipped}, draw.RingGlyph{}},
	{"missing", []result.Status{history.StatusMissing}, draw.PlusGlyph{}},
}

// dashChart draws a group's series over the runs: each backend's medians
// and intervals, its failed, unsupported and missing runs as marks of its
// colour on the floor, and each step it took as a dashed line of its
// colour before the first bad run, named in the legend. It returns the
// SVG and the figure's width.
func dashChart(h *history.History, g dashGroup, opt DashboardOptions) ([]byte, vg.Length, error) {
	n := len(h.Runs)
	var series []plot.Series
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range g.Series {
		ps := plot.Series{Name: s.Backend, Color: plot.Color(i), Shape: i}
		for _, p := range s.Points {
			if p.OK() {
				ps.X, ps.Y = append(ps.X, float64(p.Run)), append(ps.Y, p.Median)
				run := h.Runs[p.Run]
				ps.Hover = append(ps.Hover, fmt.Sprintf("%s: %.4g ms (95%% CI %.4g to %.4g), commit %s, %s",
					s.Backend, p.Median, p.Lo, p.Hi, shortHash(run.Commit, 10), run.Date.UTC().Format("2006-01-02 15:04")))
				lo, hi = math.Min(lo, p.Lo), math.Max(hi, p.Hi)
			}
		}
		series = append(series, ps)
	}
	// Ticks: short commits over their dates, thinned so no two labels meet.
	every := max(1, (n+7)/8)
	var ticks []float64
	var labels []string
	for i := 0; i < n; i += every {
		ticks = append(ticks, float64(i))
		labels = append(labels, shortHash(h.Runs[i].Commit, 7)+"\n"+h.Runs[i].Date.UTC().Format("2006-01-02"))
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	logY := (opt.LogY || hi > 10*lo) && lo > 0
	yLabel := "median ms (95% CI)"
	if logY {
		yLabel += ", log scale"
	}
	p, err := plot.Lines(plot.Axes{XLabel: "commit and date (oldest to newest)", YLabel: yLabel, XTicks: ticks, XTickLabels: labels, LogY: logY, LegendOutside: true}, series)
	if err != nil {
		return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
	}
	floor := lo - 0.08*(hi-lo+1e-9)
	if logY {
		floor = lo / 1.25
	}
	for i, s := range g.Series {
		var errs plotter.XYs
		var yerr plotter.YErrors
		for _, pt := range s.Points {
			if pt.OK() {
				errs = append(errs, plotter.XY{X: float64(pt.Run), Y: pt.Median})
				yerr = append(yerr, struct{ Low, High float64 }{pt.Median - pt.Lo, pt.Hi - pt.Median})
			}
		}
		if len(errs) > 0 {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{errs, yerr})
			if err != nil {
				return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
			}
			eb.LineStyle.Color, eb.CapWidth = plot.Color(i), vg.Points(4)
			p.Add(eb)
		}
	}
	// A failure's mark is its backend's colour, its glyph the kind; the
	// legend names the kinds (in black) and the tooltip the backend.
	for _, kind := range notOK {
		drawn := false
		for i, s := range g.Series {
			var xys plotter.XYs
			for _, pt := range s.Points {
				if slices.Contains(kind.statuses, pt.Status) {
					xys = append(xys, plotter.XY{X: float64(pt.Run), Y: floor})
					run := h.Runs[pt.Run]
					plot.Hover(p, float64(pt.Run), floor, fmt.Sprintf("%s: %s, commit %s, %s", s.Backend, pt.Status,
						shortHash(run.Commit, 10), run.Date.UTC().Format("2006-01-02 15:04")))
				}
			}
			if len(xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: plot.Color(i), Radius: vg.Points(3), Shape: kind.glyph}
			p.Add(sc)
			drawn = true
		}
		if drawn {
			p.Legend.Add(kind.name, &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: plot.Color(7), Radius: vg.Points(3), Shape: kind.glyph}})
		}
	}
	top := hi
	if math.IsInf(top, 0) {
		top = 1
	}
	for i, s := range g.Series {
		for _, st := range s.Steps {
			x := float64(st.FirstBad) - 0.5
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: floor}, {X: x, Y: top}})
			if err != nil {
				return nil, 0, fmt.Errorf("dashboard chart %s: %w", g.Title, err)
			}
			l.LineStyle = draw.LineStyle{Color: plot.Color(i), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(l)
			bad := h.Runs[st.FirstBad]
			p.Legend.Add(fmt.Sprintf("%s step %+.1f%%, first bad %s", s.Backend, 100*(st.Ratio-1), shortHash(bad.Commit, 7)), l)
			plot.Hover(p, float64(st.FirstBad), st.After, fmt.Sprintf("%s: step %+.1f%% (95%% CI %+.1f%% to %+.1f%%), %.4g -> %.4g ms; first bad commit %s (%s), last good %s",
				s.Backend, 100*(st.Ratio-1), 100*(st.Lo-1), 100*(st.Hi-1), st.Before, st.After, shortHash(bad.Commit, 10),
				bad.Date.UTC().Format("2006-01-02"), shortHash(h.Runs[st.LastGood].Commit, 10)))
		}
	}
	// The floor row in view; the legend goes beside the plot, never on the data.
	if logY {
		p.Y.Min, p.Y.Max = math.Min(p.Y.Min, floor/1.1), math.Max(p.Y.Max, hi*1.1)
	} else {
		p.Y.Min = math.Min(p.Y.Min, floor-0.05*(hi-lo+1e-9))
		p.Y.Max = hi + 0.05*(hi-p.Y.Min)
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	fig := plot.Single(g.ID, g.Title, p, 22*vg.Centimeter, 9*vg.Centimeter)
	fig.LegendOutside = true
	svg, err := fig.SVG()
	w, _ := fig.Size()
	return svg, w, err
}

// shortHash is the first n characters of a commit, or "?" for none.
func shortHash(c string, n int) string {
	if c == "" {
		return "?"
	}
	return c[:min(n, len(c))]
}
