package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// TextTable is one of the page's tables as rows of text: the form the CSV
// files and the PDF share, so both carry the same columns as the page.
type TextTable struct {
	Name   string // file suffix: report-<name>.csv
	Title  string
	Header []string
	Rows   [][]string
}

// TextTables are the page's summary tables (fast_p, device ceilings, the
// summary of every configuration). num writes a number (NaN: not
// applicable); the CSV keeps full precision, the PDF four digits.
func (r *Report) TextTables(num func(float64) string) []TextTable {
	fp := TextTable{Name: "fastp", Title: "fast_p: share of configurations correct and more than p times faster than " + r.Baseline,
		Header: []string{"backend"}}
	for _, p := range FastPThresholds {
		fp.Header = append(fp.Header, "fast_"+strconv.FormatFloat(p, 'g', -1, 64))
	}
	fp.Header = append(fp.Header, "failed verify", "not verified", "did not finish", "not timed")
	for _, f := range r.FastP() {
		row := []string{f.Backend}
		for i := range FastPThresholds {
			row = append(row, num(f.Share(i)))
		}
		for _, n := range []int{f.Incorrect, f.NotVerified, f.NotFinished, f.NotTimed} {
			row = append(row, strconv.Itoa(n))
		}
		fp.Rows = append(fp.Rows, row)
	}
	out := []TextTable{fp}
	if len(r.Calibrations) > 0 {
		cal := TextTable{Name: "ceilings", Title: "Device ceilings", Header: []string{"device kind", "device", "through", "dtype", "matmul TFLOP/s", "copy GB/s", "measured"}}
		for _, c := range r.Calibrations {
			for _, d := range sortedKeys(c.MatmulTFLOPs) {
				cal.Rows = append(cal.Rows, []string{c.Device.Kind, c.Device.Name, c.Backend, d, num(c.MatmulTFLOPs[d]), num(c.CopyGBps), c.Timestamp})
			}
		}
		out = append(out, cal)
	}
	sum := TextTable{Name: "summary", Title: "Summary per configuration (ratio: median over the baseline's on the same device model, with its 95% Hodges-Lehmann interval)",
		Header: []string{"configuration", "backend", "status", "median ms", "ci95 low ms", "ci95 high ms", "throughput", "unit",
			"peak memory bytes", "ratio", "ratio ci95 low", "ratio ci95 high", "TFLOP/s", "% of peak", "verified", "verified on", "notes"}}
	for _, t := range r.Tables() {
		for _, x := range t.Rows {
			mem := ""
			if x.PeakMemory > 0 {
				mem = strconv.FormatInt(x.PeakMemory, 10)
			}
			notes := strings.TrimSpace(x.Message + " " + strings.Join(x.Warnings, "; "))
			sum.Rows = append(sum.Rows, []string{t.Label, x.Backend, string(x.Status), num(x.MedianMs), num(x.CILo), num(x.CIHi),
				num(x.Throughput), x.Unit, mem, num(x.Ratio), num(x.RatioLo), num(x.RatioHi), num(x.TFLOPs), num(x.PctPeak), x.Verified, x.VerifiedOn, notes})
		}
	}
	return append(append(out, sum), sectionTables(r.workloadSections(), num)...)
}

// fullNum is the CSV's number: every digit, blank when not applicable.
func fullNum(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// shortNum is the PDF's number: four significant digits, "-" when not
// applicable.
func shortNum(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.4g", x)
}

// CSV is the table as CSV, header first.
func (t TextTable) CSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(t.Header); err != nil {
		return nil, err
	}
	if err := w.WriteAll(t.Rows); err != nil {
		return nil, fmt.Errorf("report: table %s as csv: %w", t.Name, err)
	}
	return buf.Bytes(), nil
}

func sortedKeys(m map[string]float64) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
