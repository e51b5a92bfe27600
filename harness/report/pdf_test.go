package report

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"

	"github.com/xbench/xbench/harness/plot"
)

// TestWritePDF: a real PDF, not HTML under a .pdf name: the PDF header,
// one page for the tables and one per chart, and the font embedded.
func TestWritePDF(t *testing.T) {
	r := standard(t)
	out := filepath.Join(t.TempDir(), "report.pdf")
	if _, err := r.WritePDF(out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	pages := len(regexp.MustCompile(`/Type /Page\b[^s]`).FindAll(raw, -1))
	if !bytes.HasPrefix(raw, []byte("%PDF-")) || pages < 1+len(charts) || !bytes.Contains(raw, []byte("/FontFile2")) {
		t.Errorf("PDF: header %q, %d pages (want at least %d), embedded font %v",
			raw[:min(8, len(raw))], pages, 1+len(charts), bytes.Contains(raw, []byte("/FontFile2")))
	}
}

// TestPDFCaptionsFit: every caption line of every chart fits between the
// PDF's margins in the font it is set in, and no word is lost.
func TestPDFCaptionsFit(t *testing.T) {
	charts, err := standard(t).Charts()
	if err != nil {
		t.Fatal(err)
	}
	avail := (pageW - 2*margin).Points()
	for _, ch := range charts {
		lines := captionLines(ch.Caption)
		for _, l := range lines {
			if w := plot.TextWidth(l, pdfTextPt); w > avail {
				t.Errorf("%s: caption line %.0f pt wide, the page has %.0f: %q", ch.Name, w, avail, l)
			}
		}
		if got := strings.Join(lines, " "); got != strings.Join(strings.Fields(ch.Caption), " ") {
			t.Errorf("%s: caption lines %q lose words of %q", ch.Name, got, ch.Caption)
		}
	}
}

// TestSummaryCSV: the page's tables are written beside it as CSV, one
// summary row per result, numbers that do not apply left blank.
func TestSummaryCSV(t *testing.T) {
	r := standard(t)
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(out)
	for _, name := range []string{"fastp", "ceilings", "summary"} {
		if !strings.Contains(string(page), `href="report-`+name+`.csv"`) {
			t.Errorf("page does not link report-%s.csv", name)
		}
	}
	f, err := os.Open(filepath.Join(filepath.Dir(out), "report-summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(r.Results) {
		t.Fatalf("%d rows, want a header and %d results", len(rows), len(r.Results))
	}
	for _, row := range rows[1:] {
		if row[2] != "ok" && (row[3] != "" || row[9] != "") {
			t.Errorf("%s %s is %s but has median %q ratio %q, want blanks", row[0], row[1], row[2], row[3], row[9])
		}
	}
}

// TestPDFTablesReadLikeThePage: fast_p in percent and memory in binary
// units in the PDF, raw numbers in the CSV.
func TestPDFTablesReadLikeThePage(t *testing.T) {
	r := standard(t)
	for _, tab := range r.TextTables(shortNum) {
		got := forReading(tab)
		switch tab.Name {
		case "fastp":
			if cell := got.Rows[0][1]; !strings.HasSuffix(cell, "%") {
				t.Errorf("fast_0 in the PDF reads %q, want a percentage", cell)
			}
		case "summary":
			col := slices.Index(got.Header, "peak memory")
			if col < 0 || !strings.Contains(got.Rows[0][col], "iB") {
				t.Errorf("summary memory column %d reads %q, want binary units", col, got.Rows[0][max(col, 0)])
			}
			if slices.Index(tab.Header, "peak memory bytes") < 0 {
				t.Error("forReading changed the CSV's table")
			}
			// Ratios and percent of peak as the page prints them.
			for name, re := range map[string]*regexp.Regexp{"ratio": regexp.MustCompile(`^[0-9]+\.[0-9]{2}x$`),
				"ratio ci95 low": regexp.MustCompile(`^([0-9]+\.[0-9]{2}x|-)$`), "% of peak": regexp.MustCompile(`^[0-9]+\.[0-9]%$`)} {
				col := slices.Index(got.Header, name)
				if col < 0 || !re.MatchString(got.Rows[0][col]) {
					t.Errorf("summary %q reads %q in the PDF, want it as the page prints it", name, got.Rows[0][max(col, 0)])
				}
			}
		}
	}
}

// TestPDFTablesWrapNotCut: every table of the standard report and one of
// many long columns fit the page's width, every line of every cell fits
// its column, and no character of a cell is lost (the PDF cut "backward"
// to "back…" and "TFLOP/s" to "TFL…").
func TestPDFTablesWrapNotCut(t *testing.T) {
	wide := TextTable{Name: "wide", Header: []string{"configuration", "backend", "a very long header of a column", "notes"}}
	for range 3 {
		wide.Rows = append(wide.Rows, []string{"b4 T4096 K24 C12 log float32 backward inner_only mamba", "flash-semicrf/reference",
			"0.07123456789", strings.Repeat("a message that goes on and on ", 12) + "/a/very/long/path/without/any/space/in/it/at/all/that/is/wider/than/a/column"})
	}
	tables := append(standard(t).TextTables(shortNum), wide)
	avail := float64(pageW - 2*margin)
	for _, tab := range tables {
		read := forReading(tab)
		widths, header, rows := tableLayout(read, avail)
		if total := sum(widths); total > avail+0.01 {
			t.Errorf("%s: columns %.0f pt wide, the page has %.0f", tab.Name, total, avail)
		}
		for r, row := range append([][][]string{header}, rows...) {
			src := read.Header
			if r > 0 {
				src = read.Rows[r-1]
			}
			for i, lines := range row {
				for _, l := range lines {
					if w := plot.TextWidth(l, pdfTextPt); w > widths[i]-cellPad+0.01 {
						t.Errorf("%s: line %q is %.1f pt in a %.1f pt column", tab.Name, l, w, widths[i]-cellPad)
					}
				}
				if got, want := strings.Join(strings.Fields(strings.Join(lines, "")), ""), strings.Join(strings.Fields(src[i]), ""); got != want {
					t.Errorf("%s: cell %q wrapped to %q: characters lost", tab.Name, src[i], lines)
				}
			}
		}
	}
}

// TestPDFFigurePages: the attention sweep's multi-panel figures go over
// several PDF pages, each drawn at the scale the page's width allows,
// every panel on one of them; a one-row figure stays one page.
func TestPDFFigurePages(t *testing.T) {
	r, err := Load(filepath.Join("..", "..", "results", "h100-attention", "sweep"), "")
	if err != nil {
		t.Fatal(err)
	}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	split := 0
	for _, ch := range charts {
		if len(ch.PDFPages) > 0 {
			continue // a heat map cut by rows: below
		}
		parts := pdfParts(ch)
		panels := 0
		for _, p := range parts {
			panels += len(p.Panels)
		}
		if panels != len(ch.Panels) {
			t.Errorf("%s: %d panel rows over %d pages, want all %d", ch.Name, panels, len(parts), len(ch.Panels))
		}
		if len(ch.Panels) == 1 && len(parts) != 1 {
			t.Errorf("%s: one row of panels on %d pages", ch.Name, len(parts))
		}
		if len(parts) > 1 {
			split++
			availW, availH := pageW-2*margin, pageH-2*margin-pdfCaptionRoom(ch.Caption)
			for i, p := range parts {
				w, h := p.Size()
				if sw, sh := float64(availW/w), float64(availH/h); sh < pdfMinShrink*sw && len(p.Panels) > 1 {
					t.Errorf("%s page %d: drawn at %.2f of its size where the width allows %.2f", ch.Name, i+1, sh, sw)
				}
			}
		}
	}
	if split == 0 {
		t.Error("no figure of the attention sweep went over more than one page")
	}
	// Its 72-row heat maps: parts of at most pdfGridRows rows, every row once.
	for _, ch := range charts {
		if ch.Name != "feasibility" && ch.Name != "ratio-heatmap" {
			continue
		}
		parts, rows := pdfParts(ch), 0
		for _, p := range parts {
			ticks, _ := p.Panels[0][0].Y.Tick.Marker.(gplot.ConstantTicks)
			n := 0
			for _, tk := range ticks {
				if tk.Label != "" {
					n++
				}
			}
			if n > pdfGridRows {
				t.Errorf("%s: a PDF page of %d rows, want at most %d", ch.Name, n, pdfGridRows)
			}
			rows += n
		}
		if len(parts) < 2 || rows != len(r.Configs) {
			t.Errorf("%s: %d rows over %d PDF pages, want all %d over several", ch.Name, rows, len(parts), len(r.Configs))
		}
	}
}
