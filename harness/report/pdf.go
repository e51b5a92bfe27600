package report

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"

	"github.com/xbench/xbench/harness/plot"
	"github.com/xbench/xbench/harness/units"
)

// The PDF form of the report: A4 landscape, a first page with what the
// folder holds, one page per chart (vector, drawn by the same code as the
// SVGs, the font embedded) and the summary tables drawn with the same PDF
// canvas, breaking across pages.

var (
	pageW, pageH = 297 * vg.Millimeter, 210 * vg.Millimeter
	margin       = 12 * vg.Millimeter
)

const (
	pdfTextPt  = 7.0
	pdfTitlePt = 13.0
	pdfHeadPt  = 10.0
)

// WritePDF writes the report as one PDF at out and returns it.
func (r *Report) WritePDF(out string) ([]string, error) {
	charts, err := r.Charts()
	if err != nil {
		return nil, err
	}
	doc := vgpdf.New(pageW, pageH)
	doc.EmbedFonts(true)
	c := plot.PDFCanvas(doc) // UTF-8 text in vgpdf's cp1252 fonts
	p := &pdfPage{c: c, doc: doc, y: pageH - margin}
	p.line(pdfTitlePt, "xbench report: "+r.Dir)
	p.line(pdfTextPt+1, fmt.Sprintf("%d results, backends %s; baseline %s (ratios are taken on the same device model only)",
		len(r.Results), strings.Join(r.Backends, ", "), r.Baseline))
	p.y -= vg.Points(6)
	for _, t := range r.TextTables(shortNum) {
		p.table(forReading(t))
	}
	for _, ch := range charts {
		doc.NextPage()
		p.y = pageH - margin
		p.line(pdfHeadPt, ch.Title)
		for _, l := range captionLines(ch.Caption) {
			p.line(pdfTextPt, l)
		}
		availW, availH := pageW-2*margin, p.y-margin
		chW, chH := ch.Size()
		scale := min(float64(availW/chW), float64(availH/chH))
		ch.DrawAt(c, vg.Point{X: margin, Y: p.y - vg.Length(scale)*chH}, scale)
	}
	var buf bytes.Buffer
	if _, err := doc.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("report: render pdf %s: %w", out, err)
	}
	if err := writePublic(out, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("report: write pdf: %w", err)
	}
	return []string{out}, nil
}

// pdfPage writes lines top-down, starting a new page when one is full.
type pdfPage struct {
	c   vg.Canvas
	doc *vgpdf.Canvas
	y   vg.Length // baseline of the next line
}

func (p *pdfPage) need(h vg.Length) {
	if p.y-h < margin {
		p.doc.NextPage()
		p.y = pageH - margin
	}
}

func (p *pdfPage) line(size float64, s string) {
	h := vg.Points(size * 1.4)
	p.need(h)
	p.y -= h
	plot.Text(p.c, vg.Point{X: margin, Y: p.y}, size, s)
}

// table draws t with columns as wide as their widest cell (cut to a
// share of the page), repeating the header on every page it spans.
func (p *pdfPage) table(t TextTable) {
	const maxCol = 60 // characters
	cut := func(s string) string {
		if r := []rune(s); len(r) > maxCol {
			return string(r[:maxCol-1]) + "…"
		}
		return s
	}
	widths := make([]float64, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, cell := range row {
			widths[i] = max(widths[i], plot.TextWidth(cut(cell), pdfTextPt)+6)
		}
	}
	if total := sum(widths); total > float64(pageW-2*margin) {
		f := float64(pageW-2*margin) / total
		for i := range widths {
			widths[i] *= f
		}
	}
	rowH := vg.Points(pdfTextPt * 1.6)
	p.y -= vg.Points(6)
	p.line(pdfHeadPt, t.Title)
	header := func() { p.row(t.Header, widths, rowH, cut) }
	header()
	for _, row := range t.Rows {
		if p.y-rowH < margin {
			p.need(rowH * 2)
			header()
		}
		p.row(row, widths, rowH, cut)
	}
}

func (p *pdfPage) row(cells []string, widths []float64, h vg.Length, cut func(string) string) {
	p.need(h)
	p.y -= h
	x := margin
	for i, cell := range cells {
		plot.Text(p.c, vg.Point{X: x, Y: p.y + vg.Points(pdfTextPt*0.45)}, pdfTextPt, fit(cut(cell), widths[i]-4))
		x += vg.Points(widths[i])
	}
	plot.HLine(p.c, margin, x, p.y)
}

// fit cuts s, with an ellipsis, to w points at the table's size.
func fit(s string, w float64) string {
	r := []rune(s)
	for len(r) > 1 && plot.TextWidth(string(r), pdfTextPt) > w {
		r = append(r[:len(r)-2], '…')
	}
	return string(r)
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// captionLines breaks a chart's caption at spaces into lines that fit
// the page between the margins, measured in the font the PDF sets them in
// (a count of characters let wide text run off the page).
func captionLines(s string) []string {
	return strings.Split(plot.Wrap(s, pageW-2*margin, pdfTextPt), "\n")
}

// forReading writes the PDF's tables as the HTML page does: fast_p shares
// as percentages (not 1 and 0), memory in KiB/MiB/GiB (not raw bytes).
// The CSV keeps the raw numbers.
func forReading(t TextTable) TextTable {
	out := t
	out.Header = slices.Clone(t.Header)
	out.Rows = make([][]string, len(t.Rows))
	for i, row := range t.Rows {
		out.Rows[i] = slices.Clone(row)
		for j, h := range t.Header {
			cell := row[j]
			switch {
			case t.Name == "fastp" && strings.HasPrefix(h, "fast_"):
				if x, err := strconv.ParseFloat(cell, 64); err == nil {
					out.Rows[i][j] = fmt.Sprintf("%.0f%%", 100*x)
				}
			case h == "peak memory bytes":
				if n, err := strconv.ParseInt(cell, 10, 64); err == nil {
					out.Rows[i][j] = units.Bytes(n)
				}
			case h == "% of peak":
				if x, err := strconv.ParseFloat(cell, 64); err == nil {
					out.Rows[i][j] = fmt.Sprintf("%.1f%%", x)
				}
			case h == "ratio" || strings.HasPrefix(h, "ratio ci95") || strings.HasSuffix(h, "ratio to baseline"):
				if x, err := strconv.ParseFloat(cell, 64); err == nil {
					out.Rows[i][j] = fmt.Sprintf("%.2fx", x)
				}
			}
		}
	}
	for j, h := range out.Header {
		if h == "peak memory bytes" {
			out.Header[j] = "peak memory"
		}
	}
	return out
}
