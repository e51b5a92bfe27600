package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/history"
	"github.com/xbench/xbench/harness/history/historytest"
	"github.com/xbench/xbench/harness/result"
)

// plantedHistory is twenty nights with triton at 1024 8% slower from night
// 13, a failed, an unsupported and a missing cell.
func plantedHistory(t *testing.T) (*history.History, string) {
	t.Helper()
	root := t.TempDir()
	dirs, err := historytest.Nightly(filepath.Join(root, "results"), 20, func(night int, b, m string) float64 {
		if b == "triton" && m == "1024" && night >= 13 {
			return 1.08
		}
		return 1
	}, func(night int, b, m string) result.Status {
		switch {
		case b == "jax" && m == "256" && night == 5:
			return result.StatusFailed
		case b == "pytorch" && m == "4096" && night == 9:
			return result.StatusUnsupported
		case b == "jax" && m == "4096" && night == 15:
			return ""
		}
		return result.StatusOK
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Build(dirs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, root
}

// TestDashboardPages: an index and a gemm page, a chart per shape, the
// step's row linking to the result folders either side of it, series.csv.
func TestDashboardPages(t *testing.T) {
	h, root := plantedHistory(t)
	out := filepath.Join(root, "site")
	files, err := WriteDashboard(h, out, DashboardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("files %v, want index.html, gemm.html, series.csv", files)
	}
	raw, err := os.ReadFile(filepath.Join(out, "gemm.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, want := range []string{`href="../results/night-13/"`, `href="../results/night-12/"`, `<td class="slower">&#43;8.`, "<svg", "@font-face",
		"failed, oom, timeout", "unsupported, skipped", "missing"} {
		if !strings.Contains(page, want) {
			t.Errorf("gemm.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "<figure"); n != 3 {
		t.Errorf("gemm.html has %d charts, want one per shape (3)", n)
	}
	if strings.Contains(page, "src=\"http") || strings.Contains(page, "href=\"http") {
		t.Error("the page links outside itself")
	}
}

// TestDashboardInChromium lays the gemm page out in headless Chromium and
// fails on overlapping text, text over a glyph's edge or widths other than
// the layout's, text under 9 px or a page wider than its window
// (layoutProblems, as for the report), at a laptop's and a phone's width.
// XBENCH_SCREENSHOT_DASHBOARD=path keeps a screenshot (docs/dashboard.png).
func TestDashboardInChromium(t *testing.T) {
	h, root := plantedHistory(t)
	out := filepath.Join(root, "site")
	if _, err := WriteDashboard(h, out, DashboardOptions{}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(out, "gemm.html")
	for _, win := range windows {
		l := layoutIn(t, page, win.w, win.h)
		if len(l.Charts) != 3 {
			t.Errorf("%dx%d: %d charts measured, want 3", win.w, win.h, len(l.Charts))
		}
		for _, p := range layoutProblems(l) {
			t.Errorf("%dx%d: %s", win.w, win.h, p)
		}
	}
	if keep := os.Getenv("XBENCH_SCREENSHOT_DASHBOARD"); keep != "" {
		screenshot(t, page, keep, 1400, 2600)
	}
}

// TestDashboardCheckCatchesOverlap: the layout check fails this page when
// two labels are drawn on top of each other (a tick label copied onto
// its neighbour), so the test above has teeth.
func TestDashboardCheckCatchesOverlap(t *testing.T) {
	h, root := plantedHistory(t)
	out := filepath.Join(root, "site")
	if _, err := WriteDashboard(h, out, DashboardOptions{}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(out, "gemm.html")
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Every chart's title text drawn twice at the same place.
	s := string(raw)
	i := strings.Index(s, "<text")
	j := strings.Index(s[i:], "</text>") + i + len("</text>")
	s = s[:j] + s[i:j] + s[j:]
	if err := os.WriteFile(page, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(layoutProblems(layoutIn(t, page, 1440, 900)), "\n")
	if !strings.Contains(problems, "overlaps") {
		t.Errorf("a doubled label was not reported; problems:\n%s", problems)
	}
}

// TestDashboardLinksAndKinds: with relative result folders and an absolute
// --out (the documented command) every commit link is a working relative
// path, never html/template's "#ZgotmplZ" for a file:// URL; a step down
// is listed as an improvement, not under "first bad commit"; a chart whose
// values span decades gets a log axis, and LogY forces one.
func TestDashboardLinksAndKinds(t *testing.T) {
	root := t.TempDir()
	dirs, err := historytest.Nightly(filepath.Join(root, "results"), 12, func(night int, b, m string) float64 {
		switch {
		case b == "triton" && m == "1024" && night >= 6:
			return 1.2
		case b == "jax" && m == "256" && night >= 6:
			return 1 / 1.2
		}
		return 1
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for i, d := range dirs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		dirs[i] = rel
	}
	h, err := history.Build(dirs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "site")
	if _, err := WriteDashboard(h, out, DashboardOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	if strings.Contains(page, "ZgotmplZ") || strings.Contains(page, "file://") {
		t.Error("index.html has a blocked or absolute commit link")
	}
	for _, want := range []string{`href="../results/night-06/"`, `href="../results/night-05/"`, `id="regressions"`, `id="improvements"`,
		"first faster commit", "first bad commit"} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	reg, imp := strings.Index(page, `id="regressions"`), strings.Index(page, `id="improvements"`)
	if triton, jax := strings.Index(page, ">triton<"), strings.Index(page, ">jax<"); !(reg < triton && triton < imp && imp < jax) {
		t.Errorf("triton's slowdown should be under regressions and jax's speed-up under improvements")
	}
	// Each chart is one shape: pytorch to triton span 3x, linear; forced log.
	for _, tc := range []struct {
		opt  DashboardOptions
		want bool
	}{{DashboardOptions{}, false}, {DashboardOptions{LogY: true}, true}} {
		if _, err := WriteDashboard(h, out, tc.opt); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(out, "gemm.html"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(raw), "log scale"); got != tc.want {
			t.Errorf("LogY %v: log axis %v, want %v", tc.opt.LogY, got, tc.want)
		}
	}
	// Every point has a tooltip with its value, interval, commit and date,
	// and the commit axis says when each commit was made.
	raw, err = os.ReadFile(filepath.Join(out, "gemm.html"))
	if err != nil {
		t.Fatal(err)
	}
	gemm := string(raw)
	night := h.Runs[6]
	hover := regexp.MustCompile(`<circle [^>]*><title>triton: [0-9.e+-]+ ms \(95% CI [0-9.e+-]+ to [0-9.e+-]+\), commit ` +
		regexp.QuoteMeta(shortHash(night.Commit, 10)) + `, ` + regexp.QuoteMeta(night.Date.UTC().Format("2006-01-02 15:04")) + `</title></circle>`)
	if !hover.MatchString(gemm) {
		t.Errorf("no tooltip for triton's point at night 6 (commit %s) in gemm.html", shortHash(night.Commit, 10))
	}
	if points := strings.Count(gemm, "<title>"); points < 12 {
		t.Errorf("%d tooltips in gemm.html, want one per point", points)
	}
	if day := h.Runs[0].Date.UTC().Format("2006-01-02"); !strings.Contains(gemm, ">"+day+"</text>") {
		t.Errorf("the commit axis does not date the first commit (%s)", day)
	}
}

// TestDashboardMarksStepsAndFailures: the step is drawn on its own chart
// and named there with its first bad commit, the step's row links to that
// chart, each failure mark's tooltip names its backend, and the index's
// runs table links every run's folder.
func TestDashboardMarksStepsAndFailures(t *testing.T) {
	h, root := plantedHistory(t)
	out := filepath.Join(root, "site")
	if _, err := WriteDashboard(h, out, DashboardOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		raw, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	gemm, index := read("gemm.html"), read("index.html")
	var bad history.Run
	for _, s := range h.Series {
		if s.Backend == "triton" && len(s.Steps) > 0 {
			bad = h.Runs[s.Steps[len(s.Steps)-1].FirstBad]
		}
	}
	if bad.Commit == "" {
		t.Fatal("the planted step was not detected")
	}
	m := regexp.MustCompile(`<a href="gemm.html#(g[0-9]+)">chart</a>`).FindStringSubmatch(gemm)
	if m == nil {
		t.Fatal("the step's row does not link to its chart")
	}
	fig := regexp.MustCompile(`(?s)<figure id="` + m[1] + `">.*?</figure>`).FindString(gemm)
	if want := "triton step +8"; !strings.Contains(fig, want) || !strings.Contains(fig, "first bad "+shortHash(bad.Commit, 7)) {
		t.Errorf("chart %s does not name the step (%q) and its first bad commit %s", m[1], want, shortHash(bad.Commit, 7))
	}
	if !strings.Contains(index, `href="gemm.html#`+m[1]+`"`) {
		t.Error("the index's step row does not link to the chart")
	}
	for _, want := range []string{"<title>jax: failed, commit", "<title>pytorch: unsupported, commit", "<title>jax: missing, commit"} {
		if !strings.Contains(gemm, want) {
			t.Errorf("gemm.html has no failure mark whose tooltip starts %q", want)
		}
	}
	for _, run := range h.Runs {
		if l := string(link(out, run.Dir)); !strings.Contains(index, `<a href="`+l+`">`) {
			t.Errorf("the runs table does not link %s (%s)", run.Dir, l)
		}
	}
}
