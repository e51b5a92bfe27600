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
		parts := pdfParts(ch)
		for i, part := range parts {
			doc.NextPage()
			p.y = pageH - margin
			title := ch.Title
			if len(parts) > 1 {
				title += fmt.Sprintf(" (page %d of %d)", i+1, len(parts))
			}
			p.line(pdfHeadPt, title)
			for _, l := range captionLines(ch.Caption) {
				p.line(pdfTextPt, l)
			}
			p.y -= vg.Points(pdfTextPt) // the caption's descenders clear the figure's title
			availW, availH := pageW-2*margin, p.y-margin
			chW, chH := part.Size()
			scale := min(float64(availW/chW), float64(availH/chH))
			part.DrawAt(c, vg.Point{X: margin, Y: p.y - vg.Length(scale)*chH}, scale)
		}
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

// pdfParts splits a figure of several rows of panels into pages of as
// many rows as fit at the scale its width allows (a 12-panel figure on
// one page drew each panel at a third of its size); a figure of one row
// is one page, unless it brings its own pages (Chart.PDFPages: a tall
// heat map in parts of whole rows).
func pdfParts(ch Chart) []plot.Figure {
	if len(ch.PDFPages) > 0 {
		return ch.PDFPages
	}
	rows := len(ch.Panels)
	availW, availH := pageW-2*margin, pageH-2*margin-pdfCaptionRoom(ch.Caption)
	w, h := ch.Size()
	if rows < 2 || float64(availH/h) >= float64(availW/w)*pdfMinShrink {
		return []plot.Figure{ch.Figure}
	}
	// As many rows a page as fit at pdfMinShrink of the scale the width
	// allows, at least one.
	perRow := ch.Height / vg.Length(rows)
	legend := h - ch.Height
	k := max(1, int(float64((availH*w/(availW*pdfMinShrink)-legend)/perRow)))
	var out []plot.Figure
	for lo := 0; lo < rows; lo += k {
		part := ch.Figure
		part.Panels = ch.Panels[lo:min(lo+k, rows)]
		part.Height = perRow * vg.Length(len(part.Panels))
		out = append(out, part)
	}
	return out
}

// pdfMinShrink is how far below the scale its width allows a figure's
// part may be drawn to fit one more row of panels on a page.
const pdfMinShrink = 0.75

// pdfCaptionRoom is the height a chart's title and caption take on its page.
func pdfCaptionRoom(caption string) vg.Length {
	return vg.Points(pdfHeadPt*1.4) + vg.Length(len(captionLines(caption)))*vg.Points(pdfTextPt*1.4) + vg.Points(pdfTextPt)
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

// table draws t, each cell wrapped to its column (nothing is cut),
// repeating the header on every page it spans.
func (p *pdfPage) table(t TextTable) {
	widths, header, rows := tableLayout(t, float64(pageW-2*margin))
	lineH := vg.Points(pdfTextPt * 1.25)
	p.y -= vg.Points(6)
	p.line(pdfHeadPt, t.Title)
	p.row(header, widths, lineH)
	for _, row := range rows {
		if h := rowHeight(row, lineH); p.y-h < margin {
			p.need(h * 2)
			p.row(header, widths, lineH)
		}
		p.row(row, widths, lineH)
	}
}

// rowHeight is the height of a row of wrapped cells.
func rowHeight(cells [][]string, lineH vg.Length) vg.Length {
	n := 1
	for _, c := range cells {
		n = max(n, len(c))
	}
	return vg.Length(n)*lineH + vg.Points(pdfTextPt*0.35)
}

func (p *pdfPage) row(cells [][]string, widths []float64, lineH vg.Length) {
	h := rowHeight(cells, lineH)
	p.need(h)
	top := p.y
	p.y -= h
	x := margin
	for i, lines := range cells {
		for k, l := range lines {
			plot.Text(p.c, vg.Point{X: x, Y: top - vg.Length(k+1)*lineH + vg.Points(pdfTextPt*0.2)}, pdfTextPt, l)
		}
		x += vg.Points(widths[i])
	}
	plot.HLine(p.c, margin, x, p.y)
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
