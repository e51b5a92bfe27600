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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/plot"
)

//go:embed layout.js
var layoutJS string

type quad [4][2]float64 // corners in order; 0->1 runs along the text, 0->3 across it

type textBox struct {
	Text       string
	Size       float64 // font size in the SVG's user units (points)
	ScreenSize float64 `json:"screenSize"` // the size it is drawn at in the window, CSS px
	Width      float64 // the browser's advance width, user units
	Font       string
	Quad       quad
}

type chartLayout struct {
	Name   string
	Texts  []textBox
	Shapes []quad
	Bars   []barBox   // each bar's box as the chart recorded it (its tooltip)
	Box    [4]float64 // the chart's own box in the window: left, top, right, bottom
}

type barBox struct {
	Text string
	Quad quad
}

type pageLayout struct {
	Fonts  []string
	Charts []chartLayout
	// The window's width, the page's (wider means something neither
	// wraps nor scrolls in its own box) and its smallest text outside
	// the charts.
	Viewport, PageWidth float64
	SmallestText        float64 `json:"smallestText"`
	SmallestTextOf      string  `json:"smallestTextOf"`
}

// The window sizes every report is laid out at: a laptop's and a phone's.
var windows = []struct{ w, h int }{{1440, 900}, {390, 844}}

// minScreenText is the smallest text, in CSS px, a reader must be given.
const minScreenText = 9.0

var layoutPre = regexp.MustCompile(`(?s)<pre id="xbench-layout">(.*?)</pre>`)

// layoutIn opens page in headless Chromium with layout.js added and
// returns what it measured in a window w x h. It runs on a copy, so the
// page is unchanged.
func layoutIn(t *testing.T, page string, w, h int) pageLayout {
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
		fmt.Sprintf("--window-size=%d,%d", w, h), "--dump-dom", "file://"+probe)
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
// into a cell or a bar; text wholly inside a cell is its value); a page
// wider than its window, text smaller than minScreenText; a bar that
// overlaps another or is not drawn whole where the chart put it (hidden
// behind another, or cut at the axis).
func layoutProblems(l pageLayout) []string {
	var bad []string
	if l.PageWidth > l.Viewport+1 {
		bad = append(bad, fmt.Sprintf("the page is %.0f px wide in a %.0f px window: something neither wraps nor scrolls in its own box", l.PageWidth, l.Viewport))
	}
	if l.SmallestText < minScreenText {
		bad = append(bad, fmt.Sprintf("page text of %.1f px, under %.0f: %s", l.SmallestText, minScreenText, l.SmallestTextOf))
	}
	for _, c := range l.Charts {
		small := 0
		for _, a := range c.Texts {
			if a.ScreenSize < minScreenText-0.05 {
				if small++; small <= 3 {
					bad = append(bad, fmt.Sprintf("%s: %q drawn at %.1f px, under %.0f", c.Name, a.Text, a.ScreenSize, minScreenText))
				}
			}
		}
		for _, a := range c.Texts {
			// Its ink: the font box reaches above the glyphs, and a title
			// at the top edge is whole.
			x0, x1 := project(ink(a.Quad), [2]float64{1, 0})
			y0, y1 := project(ink(a.Quad), [2]float64{0, 1})
			if x0 < c.Box[0]-1 || x1 > c.Box[2]+1 || y0 < c.Box[1]-1 || y1 > c.Box[3]+1 {
				bad = append(bad, fmt.Sprintf("%s: %q runs off the chart (%.0f..%.0f x %.0f..%.0f, the chart %.0f..%.0f x %.0f..%.0f)",
					c.Name, a.Text, x0, x1, y0, y1, c.Box[0], c.Box[2], c.Box[1], c.Box[3]))
			}
		}
		for i, a := range c.Bars {
			for _, b := range c.Bars[i+1:] {
				if overlap(a.Quad, b.Quad) {
					bad = append(bad, fmt.Sprintf("%s: bar %q overlaps bar %q", c.Name, a.Text, b.Text))
				}
			}
			if !drawnAt(a.Quad, c.Shapes) {
				bad = append(bad, fmt.Sprintf("%s: bar %q is not drawn whole at its box (hidden or cut)", c.Name, a.Text))
			}
		}
	}
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

// drawnAt says whether a filled shape spans the bar's box across (within
// a pixel) and lies within it along its height: the bar is drawn there,
// whole. (A bar's box is at least 2 points tall so a bar near zero can be
// pointed at; the drawn one may be thinner.)
func drawnAt(bar quad, shapes []quad) bool {
	bx0, bx1 := project(bar, [2]float64{1, 0})
	by0, by1 := project(bar, [2]float64{0, 1})
	for _, s := range shapes {
		sx0, sx1 := project(s, [2]float64{1, 0})
		sy0, sy1 := project(s, [2]float64{0, 1})
		if math.Abs(sx0-bx0) <= 1 && math.Abs(sx1-bx1) <= 1 && sy0 >= by0-1 && sy1 <= by1+1 {
			return true
		}
	}
	return false
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

// TestBarCheckCatchesOverlap: the bar checks have teeth. With one bar's
// box widened over its neighbour's (as fixed-width bars ran into the next
// cluster), the check reports the overlap and a bar not drawn at its box.
func TestBarCheckCatchesOverlap(t *testing.T) {
	r := standard(t)
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	bar := regexp.MustCompile(`<rect class="bar" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"`)
	m := bar.FindStringSubmatchIndex(string(raw))
	if m == nil {
		t.Fatal("the standard report draws no bars")
	}
	w, _ := strconv.ParseFloat(string(raw[m[6]:m[7]]), 64)
	wide := string(raw[:m[6]]) + strconv.FormatFloat(3*w, 'f', 2, 64) + string(raw[m[7]:])
	if err := os.WriteFile(out, []byte(wide), 0o644); err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(layoutProblems(layoutIn(t, out, 1440, 900)), "\n")
	for _, want := range []string{"overlaps bar", "is not drawn whole"} {
		if !strings.Contains(problems, want) {
			t.Errorf("with a bar over its neighbour the check reports no %q; it reported:\n%s", want, problems)
		}
	}
}
