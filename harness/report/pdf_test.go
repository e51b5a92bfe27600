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
