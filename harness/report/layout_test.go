package report

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/plot"
)

//go:embed layout.js
var layoutJS string

type quad [4][2]float64 // corners in order; 0->1 runs along the text, 0->3 across it

type textBox struct {
	Text  string
	Size  float64 // font size in the SVG's user units (points)
	Width float64 // the browser's advance width, user units
	Font  string
	Quad  quad
}

type chartLayout struct {
	Name   string
	Texts  []textBox
	Shapes []quad
}

type pageLayout struct {
	Fonts  []string
	Charts []chartLayout
}

var layoutPre = regexp.MustCompile(`(?s)<pre id="xbench-layout">(.*?)</pre>`)

// layoutIn opens page in headless Chromium with layout.js added and
// returns what it measured. It runs on a copy, so the page is unchanged.
func layoutIn(t *testing.T, page string) pageLayout {
	t.Helper()
	bin := chromium(t)
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(filepath.Dir(page), "layout-probe.html")
	src := strings.Replace(string(raw), "</body>", "<script>"+layoutJS+"</script></body>", 1)
	if err := os.WriteFile(probe, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(probe)
	// The deadline only stops a hung browser; nothing is timed. The
	// virtual time budget lets the font load and the script run before
	// the DOM is dumped.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--virtual-time-budget=15000",
		"--window-size=1400,3000", "--dump-dom", "file://"+probe)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v\n%s", probe, err, stderr.String())
	}
	m := layoutPre.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("chromium ran, but layout.js left no measurements in the DOM of %s (%d bytes)", probe, len(dom))
	}
	var l pageLayout
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &l); err != nil {
		t.Fatalf("decode layout of %s: %v", probe, err)
	}
	return l
}

// layoutProblems lists what a reader would see wrong: the charts' font
// not loaded, text drawn wider or narrower than the layout assumed, two
// texts overlapping, or a text half over a filled shape (a label running
// into a cell or a bar; text wholly inside a cell is its value).
func layoutProblems(l pageLayout) []string {
	var bad []string
	loaded := false
	for _, f := range l.Fonts {
		loaded = loaded || f == plot.FontFamily+" loaded"
	}
	if !loaded {
		bad = append(bad, fmt.Sprintf("the embedded font %q did not load (fonts: %v)", plot.FontFamily, l.Fonts))
	}
	for _, c := range l.Charts {
		if len(c.Texts) == 0 {
			bad = append(bad, c.Name+": no text measured")
		}
		for i, a := range c.Texts {
			if want := plot.TextWidth(a.Text, a.Size); math.Abs(a.Width-want) > 0.02*want+0.5 {
				bad = append(bad, fmt.Sprintf("%s: %q is %.1f wide in the browser (font %s), laid out for %.1f",
					c.Name, a.Text, a.Width, a.Font, want))
			}
			ia := ink(a.Quad)
			for _, b := range c.Texts[i+1:] {
				if overlap(ia, ink(b.Quad)) {
					bad = append(bad, fmt.Sprintf("%s: text %q overlaps %q", c.Name, a.Text, b.Text))
				}
			}
			for _, s := range c.Shapes {
				if overlap(ia, s) && !inside(ia, s) {
					bad = append(bad, fmt.Sprintf("%s: text %q runs over the edge of a shape at %.0f,%.0f", c.Name, a.Text, s[0][0], s[0][1]))
				}
			}
		}
	}
	return bad
}

// ink shrinks a text box across the text to the part glyphs fill: the box
// spans the font's ascent and descent, of which accents and descenders
// use the outer fifth.
func ink(q quad) quad {
	const f = 0.2
	lerp := func(a, b [2]float64, t float64) [2]float64 {
		return [2]float64{a[0] + t*(b[0]-a[0]), a[1] + t*(b[1]-a[1])}
	}
	return quad{lerp(q[0], q[3], f), lerp(q[1], q[2], f), lerp(q[2], q[1], f), lerp(q[3], q[0], f)}
}

// overlap says whether two convex quads share more than a touching edge
// (separating axis theorem, half a pixel of slack).
func overlap(a, b quad) bool {
	for _, q := range []quad{a, b} {
		for i := range 4 {
			e := [2]float64{q[(i+1)%4][0] - q[i][0], q[(i+1)%4][1] - q[i][1]}
			n := math.Hypot(e[0], e[1])
			if n == 0 {
				continue
			}
			axis := [2]float64{-e[1] / n, e[0] / n}
			alo, ahi := project(a, axis)
			blo, bhi := project(b, axis)
			if ahi <= blo+0.5 || bhi <= alo+0.5 {
				return false
			}
		}
	}
	return true
}

func project(q quad, axis [2]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range q {
		d := p[0]*axis[0] + p[1]*axis[1]
		lo, hi = math.Min(lo, d), math.Max(hi, d)
	}
	return lo, hi
}

// inside says whether every corner of a lies within the box around s.
func inside(a, s quad) bool {
	x0, x1 := project(s, [2]float64{1, 0})
	y0, y1 := project(s, [2]float64{0, 1})
	for _, p := range a {
		if p[0] < x0-0.5 || p[0] > x1+0.5 || p[1] < y0-0.5 || p[1] > y1+0.5 {
			return false
		}
	}
	return true
}
