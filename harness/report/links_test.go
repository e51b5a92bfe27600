package report

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/history"
	"github.com/xbench/xbench/harness/history/historytest"
)

var (
	hrefs = regexp.MustCompile(`href="([^"]*)"`)
	ids   = regexp.MustCompile(`id="([^"]*)"`)
)

// brokenLinks lists the links of the HTML file page that lead nowhere: an
// anchor no element has, or a relative file or folder that does not exist.
func brokenLinks(t *testing.T, page string) []string {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(raw)
	have := map[string]bool{}
	for _, m := range ids.FindAllStringSubmatch(html, -1) {
		have[m[1]] = true
	}
	var bad []string
	for _, m := range hrefs.FindAllStringSubmatch(html, -1) {
		h := m[1]
		switch {
		case h == "" || strings.Contains(h, "ZgotmplZ"):
			bad = append(bad, h+" (blocked or empty)")
		case strings.HasPrefix(h, "#"):
			if !have[h[1:]] {
				bad = append(bad, h+" (no such id)")
			}
		case strings.Contains(h, "://"):
			bad = append(bad, h+" (absolute URL)")
		default:
			p, err := url.PathUnescape(strings.SplitN(h, "#", 2)[0])
			if err != nil {
				bad = append(bad, h+" ("+err.Error()+")")
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(p))); err != nil {
				bad = append(bad, h+" (missing)")
			}
		}
	}
	return bad
}

// TestEveryLinkResolves: the report of the standard sweep, of a folder of
// two GPU models (sections, contents) and the dashboard link only to ids
// on the page and files that exist.
func TestEveryLinkResolves(t *testing.T) {
	dir := t.TempDir()
	if _, err := sweeptest.WriteStandard(dir, "run-1"); err != nil {
		t.Fatal(err)
	}
	if err := sweeptest.Write(dir, sweeptest.OnDevice(sweeptest.Sweep("run-1")[:8], sweeptest.H200, 0.7, "run-2")); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	for _, b := range brokenLinks(t, out) {
		t.Errorf("report: broken link %s", b)
	}
	root := t.TempDir()
	dirs, err := historytest.Nightly(filepath.Join(root, "results"), 8, func(night int, b, m string) float64 {
		if b == "jax" && night >= 4 {
			return 1.3
		}
		return 1
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Build(dirs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(root, "site")
	if _, err := WriteDashboard(h, site, DashboardOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"index.html", "gemm.html"} {
		for _, b := range brokenLinks(t, filepath.Join(site, p)) {
			t.Errorf("dashboard %s: broken link %s", p, b)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(site, "index.html"))
	if !strings.Contains(string(raw), "../results/night-04/") {
		t.Error("the dashboard has no commit link to check")
	}
}

// TestSmallRatesKeepTheirDigits: a throughput of 0.4473 TFLOP/s is not
// printed "0".
func TestSmallRatesKeepTheirDigits(t *testing.T) {
	count := funcs["count"].(func(float64) string)
	for x, want := range map[float64]string{0.4473: "0.4473", 12.5: "12.5", 109139.46: "109139"} {
		if got := count(x); got != want {
			t.Errorf("count(%v) = %q, want %q", x, got, want)
		}
	}
}
