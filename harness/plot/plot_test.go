package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

func TestFiguresRender(t *testing.T) {
	lines, err := Lines(Axes{Title: "t", XLabel: "x", YLabel: "y", LogX: true, LogY: true, XTicks: []float64{512, 1024}},
		[]Series{{Name: "alpha", Color: Color(0), X: []float64{512, 1024, 0}, Y: []float64{1, 2, 3}},
			{Name: "beta", Color: Color(1), X: []float64{512, 1024}, Y: []float64{math.NaN(), 4}}})
	if err != nil {
		t.Fatal(err)
	}
	bars, err := Bars(Axes{Title: "b"}, []string{"c1", "c2"}, []BarGroup{{Name: "alpha", Color: Color(0), Values: []float64{1, math.NaN()}},
		{Name: "beta", Color: Color(1), Values: []float64{2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	roof, err := Roofline("r", []Series{{Name: "alpha", Color: Color(0), X: []float64{50}, Y: []float64{10}},
		{Name: "beta", Color: Color(1), X: []float64{100}, Y: []float64{20}}},
		[]Ceiling{{Name: "float32 roof", Color: color.Black, PeakTFLOPs: 60, TBps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	grid := GridPlot(Grid{Title: "g", Rows: []string{"row one", "row two"}, Cols: []string{"alpha", "beta"},
		Cells: [][]Cell{{{Color: Diverging(-1), Text: "0.50x"}, {Text: "-"}}, {{Color: Diverging(1), Text: "oom"}, {Color: Diverging(0), Text: "1.00x"}}}})
	figs := []Figure{
		Single("lines", "", lines, 5*vg.Inch, 4*vg.Inch),
		Single("bars", "", bars, 5*vg.Inch, 4*vg.Inch),
		Single("roofline", "", roof, 5*vg.Inch, 4*vg.Inch),
		Single("grid", "", grid, 5*vg.Inch, 3*vg.Inch),
		{Name: "multi", Panels: [][]*gplot.Plot{{lines, bars}, {roof}}, Width: 8 * vg.Inch, Height: 6 * vg.Inch},
	}
	for _, f := range figs {
		svg, err := f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{">alpha</text>", ">beta</text>", "'Liberation Sans',Arial"} {
			if !bytes.Contains(svg, []byte(want)) {
				t.Errorf("%s.svg lacks %q", f.Name, want)
			}
		}
		if in := InlineSVG(svg); !strings.HasPrefix(in, "<svg") {
			t.Errorf("%s: inline SVG starts %q", f.Name, in[:min(20, len(in))])
		}
		raw, err := f.PNG(72)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil || img.Bounds().Dx() != int(f.Width.Points()) {
			t.Errorf("%s.png: %v, %v", f.Name, err, img.Bounds())
		}
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{15, 260, []string{"20", "50", "100", "200"}},
		{0.3, 1e6, []string{"1", "10", "100", "1000", "10000", "100000", "1000000"}},
		{1e7, 3e7, []string{"1e+07", "2e+07"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("ticks(%g, %g) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestDivergingAndText(t *testing.T) {
	for _, tt := range []struct {
		t    float64
		want color.RGBA
	}{{0, color.RGBA{247, 247, 247, 255}}, {1, color.RGBA{215, 48, 39, 255}}, {-5, color.RGBA{26, 152, 80, 255}}} {
		if got := Diverging(tt.t); got != tt.want {
			t.Errorf("Diverging(%g) = %v, want %v", tt.t, got, tt.want)
		}
	}
	if textOn(color.Black) != color.White || textOn(color.White) != color.Black || textOn(nil) != color.Black {
		t.Error("text colour should contrast with its fill")
	}
}

// TestLegendOutside: a figure with LegendOutside draws the legend's
// entries right of the panel, not over its data area.
func TestLegendOutside(t *testing.T) {
	roof, err := Roofline("r", []Series{{Name: "alpha", Color: Color(0), X: []float64{50}, Y: []float64{10}}},
		[]Ceiling{{Name: "float32 roof", Color: color.Black, PeakTFLOPs: 60, TBps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	f := Single("roofline", "", roof, 8*vg.Inch, 4*vg.Inch)
	f.LegendOutside = true
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	axisLabel := textX(t, svg, "arithmetic intensity (FLOP/byte)")
	for _, entry := range []string{"alpha", "float32 roof"} {
		if x := textX(t, svg, entry); x < 2*axisLabel {
			t.Errorf("legend entry %q at x=%.0f, inside the plot (x axis label centred at %.0f)", entry, x, axisLabel)
		}
	}
}

func textX(t *testing.T, svg []byte, text string) float64 {
	t.Helper()
	s := string(svg)
	i := strings.Index(s, ">"+text+"</text>")
	if i < 0 {
		t.Fatalf("no text %q", text)
	}
	j := strings.LastIndex(s[:i], `<text x="`)
	var x float64
	if _, err := fmt.Sscanf(s[j+len(`<text x="`):], "%g", &x); err != nil {
		t.Fatalf("x of %q: %v", text, err)
	}
	return x
}

// TestIntervalsDrawn: a line with intervals gets a translucent band in its
// colour, a bar group with intervals gets whiskers, and without intervals
// neither is drawn.
func TestIntervalsDrawn(t *testing.T) {
	svgOf := func(p *gplot.Plot) string {
		t.Helper()
		raw, err := Single("x", "", p, 5*vg.Inch, 4*vg.Inch).SVG()
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	s := Series{Name: "alpha", Color: Color(0), X: []float64{1, 2, 4}, Y: []float64{10, 20, 40}}
	plain, err := Lines(Axes{LogX: true, LogY: true}, []Series{s})
	if err != nil {
		t.Fatal(err)
	}
	s.Lo, s.Hi = []float64{9, 18, math.NaN()}, []float64{11, 22, math.NaN()}
	banded, err := Lines(Axes{LogX: true, LogY: true}, []Series{s})
	if err != nil {
		t.Fatal(err)
	}
	const bandFill = "fill-opacity:0.2"
	if strings.Contains(svgOf(plain), bandFill) || !strings.Contains(svgOf(banded), bandFill) {
		t.Errorf("band: without intervals %v, with %v; want only with", strings.Contains(svgOf(plain), bandFill), strings.Contains(svgOf(banded), bandFill))
	}
	g := BarGroup{Name: "alpha", Color: Color(0), Values: []float64{1, 2}}
	nobars, err := Bars(Axes{}, []string{"a", "b"}, []BarGroup{g})
	if err != nil {
		t.Fatal(err)
	}
	g.Lo, g.Hi = []float64{0.9, 1.8}, []float64{1.1, 2.5}
	whisk, err := Bars(Axes{}, []string{"a", "b"}, []BarGroup{g})
	if err != nil {
		t.Fatal(err)
	}
	if n, m := strings.Count(svgOf(nobars), "stroke:#282828"), strings.Count(svgOf(whisk), "stroke:#282828"); m < n+6 {
		t.Errorf("whiskers: %d dark strokes with intervals, %d without; want 3 per bar more", m, n)
	}
	if _, _, _, ymax := (&barLayer{groups: []BarGroup{g}, n: 2}).DataRange(); ymax != 2.5 {
		t.Errorf("whiskers' range tops at %v, want 2.5 so the axis fits them", ymax)
	}
}

// TestRatioColoursDoNotSaturate: in a map holding 1.5x and 6x, the span is
// 8x, so the two cells get different reds (at a 2x span both were full).
func TestRatioColoursDoNotSaturate(t *testing.T) {
	g := Grid{Rows: []string{"a"}, Cols: []string{"x", "y", "z"}, Cells: [][]Cell{{{Ratio: 1.5}, {Ratio: 6}, {Ratio: 0.5}}}}
	if s := RatioSpan(g); s != 8 {
		t.Fatalf("span %v, want 8", s)
	}
	GridPlot(g)
	c := g.Cells[0]
	if c[0].Color == nil || c[0].Color == c[1].Color || c[1].Color == Diverging(1) && c[0].Color == Diverging(1) {
		t.Errorf("1.5x %v and 6x %v are not told apart", c[0].Color, c[1].Color)
	}
	if RatioSpan(Grid{Cells: [][]Cell{{{Ratio: 1.1}}}}) != 2 {
		t.Error("a map of small ratios should still span 2x")
	}
}

// TestPDFTextIsCP1252: vgpdf's fonts are code page 1252, so the PDF canvas
// hands them "…" as the one byte 0x85, never its three UTF-8 bytes (which
// printed as "â€¦").
func TestPDFTextIsCP1252(t *testing.T) {
	for in, want := range map[string]string{"a…": "a\x85", "K·C": "K\xb7C", "2×": "2\xd7", "χ²": "?\xb2", "plain": "plain"} {
		if got := toCP1252(in); got != want {
			t.Errorf("toCP1252(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWrapAndHeaders: a column label wider than its column is wrapped at
// spaces into lines that fit (a single long word stays whole), and a tall
// grid repeats its column labels every HeaderEvery rows.
func TestWrapAndHeaders(t *testing.T) {
	w := Wrap("burnstyle-hip (partly verified) bfloat16", vg.Points(90), 9)
	for _, line := range strings.Split(w, "\n") {
		if TextWidth(line, 9) > 90 {
			t.Errorf("line %q of %q is %.1f wide, more than 90", line, w, TextWidth(line, 9))
		}
	}
	if strings.Count(w, "\n") != 1 {
		t.Errorf("Wrap = %q, want two lines", w)
	}
	if got := Wrap("flash-semicrf-triton-kernel", vg.Points(10), 9); got != "flash-semicrf-triton-kernel" {
		t.Errorf("a word wider than the width was cut: %q", got)
	}
	g := Grid{Cols: []string{"a", "b"}}
	for i := range 2*HeaderEvery + 1 {
		g.Rows = append(g.Rows, fmt.Sprint(i))
		g.Cells = append(g.Cells, []Cell{{Text: "1"}, {Text: "2"}})
	}
	h := withHeaders(g)
	headers := 0
	for i, row := range h.Cells {
		if row[0].Header {
			headers++
			if row[1].Text != "b" || h.Rows[i] != "" {
				t.Errorf("header row %d = %+v (label %q), want the column labels and no row label", i, row, h.Rows[i])
			}
		}
	}
	if headers != 3 || len(h.Rows) != len(g.Rows)+3 {
		t.Errorf("%d header rows in %d rows, want 3 (above rows 0, %d and %d)", headers, len(h.Rows), HeaderEvery, 2*HeaderEvery)
	}
	if short := withHeaders(Grid{Rows: g.Rows[:HeaderEvery], Cells: g.Cells[:HeaderEvery], Cols: g.Cols}); len(short.Rows) != HeaderEvery {
		t.Errorf("a grid of %d rows got header rows", HeaderEvery)
	}
}

// TestFontSubset: the font the pages carry keeps the outlines of the runes
// charts write, with gonum's advance widths and kerning, and is a fraction
// of the whole font.
func TestFontSubset(t *testing.T) {
	sub, err := FontTTF()
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfnt.Parse(sub)
	if err != nil {
		t.Fatalf("the subset does not parse: %v", err)
	}
	if len(sub) > 160<<10 {
		t.Errorf("subset font is %d KB, want under 160", len(sub)>>10)
	}
	full := font.DefaultCache.Lookup(gplot.DefaultFont, vg.Points(10))
	var buf sfnt.Buffer
	ppem := fixed.I(1000)
	for _, r := range "Median time (ms) ·×…–≤Σ→ µs 95% Wrap" {
		gi, err := f.GlyphIndex(&buf, r)
		if err != nil || gi == 0 {
			t.Errorf("%q has no glyph in the subset", r)
			continue
		}
		segs, err := f.LoadGlyph(&buf, gi, ppem, nil)
		if err != nil || r != ' ' && len(segs) == 0 {
			t.Errorf("%q (glyph %d) lost its outline: %d segments, %v", r, gi, len(segs), err)
		}
		adv, _ := f.GlyphAdvance(&buf, gi, ppem, 0)
		fullGI, _ := full.Face.GlyphIndex(&buf, r)
		if fullAdv, _ := full.Face.GlyphAdvance(&buf, fullGI, ppem, 0); fullGI != gi || fullAdv != adv {
			t.Errorf("%q: glyph %d advance %v in the subset, %d %v in the font gonum measures", r, gi, adv, fullGI, fullAdv)
		}
	}
	// Kerning as gonum lays it out: "AV" is a kerned pair.
	a, _ := f.GlyphIndex(&buf, 'A')
	v, _ := f.GlyphIndex(&buf, 'V')
	k, err := f.Kern(&buf, a, v, ppem, 0)
	fk, _ := full.Face.Kern(&buf, a, v, ppem, 0)
	if err != nil || k != fk || k == 0 {
		t.Errorf("kern(A, V) = %v (%v) in the subset, %v in the full font", k, err, fk)
	}
	// A glyph no chart writes (Cyrillic) keeps its index but no outline.
	if gi, _ := f.GlyphIndex(&buf, 'Ж'); gi != 0 {
		if segs, _ := f.LoadGlyph(&buf, gi, ppem, nil); len(segs) != 0 {
			t.Errorf("Ж kept its outline (%d segments): the subset keeps more than the charts need", len(segs))
		}
	}
}

// TestSharedLegend: panels made with SharedLegend carry no legend of their
// own; the figure draws each name once, above the panels, in rows that fit
// its width (measured text, wrapping to a new row), and grows to hold it.
func TestSharedLegend(t *testing.T) {
	names := []string{"burnstyle-hip (partly verified)", "flash-semicrf", "jax (partly verified)", "pytorch (not verified)", "triton"}
	var series []Series
	for i, n := range names {
		series = append(series, Series{Name: n, Color: Color(i), X: []float64{1, 2}, Y: []float64{float64(i + 1), float64(i + 2)}})
	}
	var panels []*gplot.Plot
	for range 2 {
		p, err := Lines(Axes{Title: "panel", XLabel: "x", YLabel: "y", SharedLegend: true}, series)
		if err != nil {
			t.Fatal(err)
		}
		panels = append(panels, p)
	}
	f := Figure{Name: "f", Panels: [][]*gplot.Plot{panels}, Width: 4 * vg.Inch, Height: 3 * vg.Inch}
	entries := f.figureLegend()
	if len(entries) != len(names) {
		t.Fatalf("%d legend entries, want %d (each name once)", len(entries), len(names))
	}
	width := f.Width.Points()
	xs, rows, n := legendRows(entries, width)
	if n < 2 {
		t.Errorf("%d legend rows in %.0f pt for five long names, want them wrapped", n, width)
	}
	for i, e := range entries {
		end := xs[i] + legendThumb + legendGap + TextWidth(e.name, legendFont)
		if end > width {
			t.Errorf("%q ends at %.1f, past the figure's %.0f", e.name, end, width)
		}
		if i > 0 && rows[i] == rows[i-1] && xs[i] < xs[i-1]+legendThumb+legendGap+TextWidth(entries[i-1].name, legendFont)+legendSpace {
			t.Errorf("%q starts at %.1f, inside %q", e.name, xs[i], entries[i-1].name)
		}
	}
	if _, h := f.Size(); h <= f.Height {
		t.Errorf("figure height %v, want room above the panels' %v for the legend", h, f.Height)
	}
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if c := strings.Count(string(svg), ">"+n+"<"); c != 1 {
			t.Errorf("%q written %d times in the SVG, want once (no legend in the panels)", n, c)
		}
	}
}

// TestHoverTooltips: every point a line chart draws gets an invisible
// circle with its value as a <title> in the SVG, placed over the point
// (inside the drawing, higher values nearer the top), none in the PNG.
func TestHoverTooltips(t *testing.T) {
	p, err := Lines(Axes{Title: "t", XLabel: "T", YLabel: "ms", LogY: true},
		[]Series{{Name: "a", Color: Color(0), X: []float64{1, 2, 3}, Y: []float64{1, 10, math.NaN()},
			Lo: []float64{0.9, 9, 1}, Hi: []float64{1.1, 11, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	f := Single("f", "f", p, 4*vg.Inch, 3*vg.Inch)
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)" r="5"><title>([^<]*)</title></circle>`)
	m := re.FindAllStringSubmatch(string(svg), -1)
	if len(m) != 2 {
		t.Fatalf("%d tooltips, want one per drawn point (2): %q", len(m), m)
	}
	if !strings.Contains(string(svg), `<g class="hover" fill="transparent">`) {
		t.Error("the tooltips' circles are not transparent")
	}
	if want := "a: 1 at T 1 (95%: 0.9 to 1.1)"; m[0][3] != want {
		t.Errorf("tooltip %q, want %q", m[0][3], want)
	}
	y0, _ := strconv.ParseFloat(m[0][2], 64)
	y1, _ := strconv.ParseFloat(m[1][2], 64)
	if !(y1 < y0) || y0 > 3*72 || y1 < 0 {
		t.Errorf("tooltips at y %v and %v: want inside the 216 pt drawing, the larger value higher", y0, y1)
	}
	again, _ := f.SVG()
	if n := len(re.FindAllString(string(again), -1)); n != 2 {
		t.Errorf("a second rendering has %d tooltips, want 2 (marks not cleared between drawings)", n)
	}
	// A scatter of more than maxHovers points gets none.
	many := Series{Name: "b", Color: Color(1), PointsOnly: true}
	for i := range maxHovers + 1 {
		many.X, many.Y = append(many.X, float64(i+1)), append(many.Y, float64(i+1))
	}
	p2, err := Lines(Axes{Title: "t", XLabel: "x", YLabel: "y"}, []Series{many})
	if err != nil {
		t.Fatal(err)
	}
	big, _ := Single("g", "g", p2, 4*vg.Inch, 3*vg.Inch).SVG()
	if strings.Contains(string(big), "<title>") {
		t.Errorf("a figure of %d points carries tooltips", maxHovers+1)
	}
}
