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
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/xbench/xbench/harness/history"
	"github.com/xbench/xbench/harness/plot"
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
		groups[i].MinWidthPx, groups[i].MaxWidthPx = chartWidths(w, svg)
	}
	return groups, nil
}
