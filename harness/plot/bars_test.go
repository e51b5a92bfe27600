package plot

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"gonum.org/v1/plot/vg"
)

var barRect = regexp.MustCompile(`<rect class="bar" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"><title>([^<]*)</title>`)

// TestGroupedBarsHaveSlots: at widths from a phone's to a page's, every
// bar of every cluster gets a box of its own (no two overlap), each box
// is inside the figure, the last cluster included, and carries a tooltip
// naming its group, value and category.
func TestGroupedBarsHaveSlots(t *testing.T) {
	cats := []string{"one", "two", "three", "four", "five", "six", "seven", "eight"}
	var groups []BarGroup
	for i, name := range []string{"jax", "triton", "pytorch", "burnstyle-hip", "iree"} {
		g := BarGroup{Name: name, Color: Color(i), HollowNote: "not verified"}
		for j := range cats {
			g.Values = append(g.Values, 1+float64((i+j)%4))
			g.Hollow = append(g.Hollow, j%2 == 1)
		}
		groups = append(groups, g)
	}
	for _, tc := range []struct {
		name  string
		width vg.Length
	}{{"narrow", 3 * vg.Inch}, {"page", 11 * vg.Inch}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Bars(Axes{Title: "b", YLabel: "ratio", SharedLegend: true}, cats, groups)
			if err != nil {
				t.Fatal(err)
			}
			f := Single("bars", "", p, tc.width, 4*vg.Inch)
			svg, err := f.SVG()
			if err != nil {
				t.Fatal(err)
			}
			w, h := f.Size()
			type box struct{ x0, y0, x1, y1 float64 }
			var boxes []box
			hollowNotes := 0
			for _, m := range barRect.FindAllStringSubmatch(string(svg), -1) {
				x, _ := strconv.ParseFloat(m[1], 64)
				y, _ := strconv.ParseFloat(m[2], 64)
				bw, _ := strconv.ParseFloat(m[3], 64)
				bh, _ := strconv.ParseFloat(m[4], 64)
				boxes = append(boxes, box{x, y, x + bw, y + bh})
				if bw <= 0 {
					t.Errorf("bar %q has width %v", m[5], bw)
				}
				if x < 0 || x+bw > w.Points() || y < 0 || y+bh > h.Points() {
					t.Errorf("bar %q at %v,%v %vx%v is outside the %vx%v figure", m[5], x, y, bw, bh, w.Points(), h.Points())
				}
				if regexp.MustCompile(`\[not verified\]$`).MatchString(m[5]) {
					hollowNotes++
				}
			}
			if want := len(cats) * len(groups); len(boxes) != want {
				t.Fatalf("%d bar boxes, want %d", len(boxes), want)
			}
			if want := len(cats) / 2 * len(groups); hollowNotes != want {
				t.Errorf("%d tooltips say not verified, want %d", hollowNotes, want)
			}
			// The boxes are written to 0.01 point: neighbours may touch.
			for i, a := range boxes {
				for _, b := range boxes[i+1:] {
					if math.Min(a.x1, b.x1)-math.Max(a.x0, b.x0) > 0.05 && math.Min(a.y1, b.y1)-math.Max(a.y0, b.y0) > 0.05 {
						t.Errorf("bars overlap: %v and %v", a, b)
					}
				}
			}
		})
	}
}

// TestHollowPoints: points marked hollow are drawn with the outline of
// their glyph and say why in their tooltip; the others stay solid.
func TestHollowPoints(t *testing.T) {
	s := Series{Name: "alpha", Color: Color(0), X: []float64{1, 2, 3}, Y: []float64{1, 2, 3}, Hollow: []bool{false, true, false}, HollowNote: "not verified"}
	solid, hollow := splitHollow(s, Axes{})
	if len(solid) != 2 || len(hollow) != 1 || hollow[0].X != 2 {
		t.Fatalf("split: solid %v hollow %v, want x=1,3 solid and x=2 hollow", solid, hollow)
	}
	p, err := Lines(Axes{XLabel: "x"}, []Series{s})
	if err != nil {
		t.Fatal(err)
	}
	svg, err := Single("l", "", p, 4*vg.Inch, 3*vg.Inch).SVG()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`\[not verified\]</title>`).FindAll(svg, -1)); n != 1 {
		t.Errorf("%d tooltips say not verified, want 1", n)
	}
}

// TestGridCellsHaveTooltips: every cell of a heat map, and no repeated
// column header, gets a tooltip naming its row, column and text.
func TestGridCellsHaveTooltips(t *testing.T) {
	g := Grid{Rows: []string{"level2/1 precision=kernelbench", "level2/1 precision=strict-ieee"}, Cols: []string{"pytorch", "triton"},
		Cells: [][]Cell{{{Ratio: 1, Text: "1.00x"}, {Ratio: 0.5, Text: "0.50x", Hollow: true, Note: "not verified"}}, {{Ratio: 1, Text: "1.00x"}, {Text: "oom"}}}}
	svg, err := Single("g", "", GridPlot(g), 6*vg.Inch, 3*vg.Inch).SVG()
	if err != nil {
		t.Fatal(err)
	}
	cells := regexp.MustCompile(`<rect class="cell"[^>]*><title>([^<]*)</title>`).FindAllSubmatch(svg, -1)
	if len(cells) != 4 {
		t.Fatalf("%d cell tooltips, want 4", len(cells))
	}
	if got, want := string(cells[1][1]), "level2/1 precision=kernelbench / triton: 0.50x [not verified]"; got != want {
		t.Errorf("hollow cell's tooltip %q, want %q", got, want)
	}
	if got, want := string(cells[3][1]), "level2/1 precision=strict-ieee / triton: oom"; got != want {
		t.Errorf("last cell's tooltip %q, want %q", got, want)
	}
}
