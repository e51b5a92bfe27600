package report

// The PDF's tables: columns sized to the page and every cell wrapped to
// its column, so nothing is cut.

import (
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/xbench/xbench/harness/plot"
)

// cellPad is the room between a cell's text and the next column, points.
const cellPad = 6.0

// maxColChars bounds a column's natural width (that many digits); longer
// text wraps.
const maxColChars = 48

// tableLayout sizes t's columns to avail points and wraps every cell
// (header included) to its column: columns as wide as their widest cell
// when that fits; otherwise each at least as wide as its longest word,
// the rest of the room shared by how much more each would take. Only a
// word wider than a whole column (never in the report's tables at A4
// landscape) is broken inside; when the longest words alone are wider than
// the page, the columns of the widest words are capped (widestWords).
func tableLayout(t TextTable, avail float64) (widths []float64, header [][]string, rows [][][]string) {
	n := len(t.Header)
	natural, least := make([]float64, n), make([]float64, n)
	limit := plot.TextWidth(strings.Repeat("0", maxColChars), pdfTextPt)
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, cell := range row[:min(n, len(row))] {
			natural[i] = max(natural[i], min(plot.TextWidth(cell, pdfTextPt), limit)+cellPad)
			for _, w := range strings.Fields(cell) {
				least[i] = max(least[i], plot.TextWidth(w, pdfTextPt)+cellPad)
			}
		}
	}
	widths = natural
	if total := sum(natural); total > avail {
		lo, spare := sum(least), 0.0
		for i := range natural {
			spare += natural[i] - least[i]
		}
		widths = make([]float64, n)
		capped := widestWords(least, avail)
		for i := range natural {
			switch {
			case lo <= avail && spare > 0:
				widths[i] = least[i] + (natural[i]-least[i])*(avail-lo)/spare
			default:
				widths[i] = min(least[i], capped)
			}
		}
	}
	wrap := func(row []string) [][]string {
		out := make([][]string, n)
		for i := range out {
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			out[i] = wrapCell(cell, widths[i]-cellPad)
		}
		return out
	}
	header = wrap(t.Header)
	for _, row := range t.Rows {
		rows = append(rows, wrap(row))
	}
	return widths, header, rows
}

// widestWords is the width at which columns whose longest word is wider
// are capped so all of them fit avail (every other column keeps its
// longest word whole): a column of long paths or messages breaks inside
// its words, not every column inside "configuration" and "TFLOP/s".
func widestWords(least []float64, avail float64) float64 {
	sorted := slices.Clone(least)
	slices.Sort(sorted)
	used := 0.0
	for i, w := range sorted {
		rest := len(sorted) - i
		if used+w*float64(rest) > avail {
			return (avail - used) / float64(rest)
		}
		used += w
	}
	return sorted[len(sorted)-1]
}

// wrapCell breaks s at spaces into lines no wider than w points at the
// table's size, and a word wider than w between its characters.
func wrapCell(s string, w float64) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	for _, line := range strings.Split(plot.Wrap(s, vg.Points(w), pdfTextPt), "\n") {
		for plot.TextWidth(line, pdfTextPt) > w {
			r := []rune(line)
			k := len(r) - 1
			for k > 1 && plot.TextWidth(string(r[:k]), pdfTextPt) > w {
				k--
			}
			out, line = append(out, string(r[:k])), string(r[k:])
		}
		out = append(out, line)
	}
	return out
}
