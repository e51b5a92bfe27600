package report

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
)

// standard writes the two-backend sweep with verify records and a
// calibration into a temp folder and loads it.
func standard(t *testing.T) *Report {
	t.Helper()
	dir := t.TempDir()
	if _, err := sweeptest.WriteStandard(dir, "run-1"); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// external matches anything that would make the page fetch from the
// network: a src or href to http(s), a CSS url() or @import of one.
var external = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import`)

var chartNames = []string{"time-vs-seq-len", "throughput-vs-size", "backward-forward", "ratio-heatmap", "feasibility", "roofline"}

func TestWriteSelfContained(t *testing.T) {
	r := standard(t)
	out := filepath.Join(t.TempDir(), "sub", "report.html")
	files, err := r.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1+1+2*len(chartNames)+3 {
		t.Errorf("wrote %d files, want the page, the font, %d charts in two formats and 3 CSV tables: %v", len(files), len(chartNames), files)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if m := external.Find(page); m != nil {
		t.Errorf("page refers outside itself: %q", m)
	}
	html := string(page)
	for _, want := range []string{"<svg", "burnstyle-hip", "pytorch", "fast_1.5", "125m linear float32 L=512 B=4", "% of peak", "FAIL"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(html, "<svg"); n != len(chartNames) {
		t.Errorf("page inlines %d SVGs, want %d", n, len(chartNames))
	}
	for _, name := range chartNames {
		svg, err := os.ReadFile(filepath.Join(filepath.Dir(out), "report-"+name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		// The font is linked (report-font.ttf, written once), not embedded in each chart.
		if len(svg) > 200<<10 || !bytes.Contains(svg, []byte("src:url(report-font.ttf)")) {
			t.Errorf("%s.svg is %d KB and links no report-font.ttf: the font should be written once", name, len(svg)>>10)
		}
		for _, b := range r.Backends {
			if !bytes.Contains(svg, []byte(">"+b+"</text>")) && !bytes.Contains(svg, []byte(">"+b+", ")) {
				t.Errorf("%s.svg does not name backend %s", name, b)
			}
		}
		f, err := os.Open(filepath.Join(filepath.Dir(out), "report-"+name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 500 || img.Bounds().Dy() < 300 {
			t.Errorf("%s.png: %v, size %v", name, err, img.Bounds())
		}
	}
}

func TestTables(t *testing.T) {
	r := standard(t)
	tables := r.Tables()
	if len(tables) != len(sweeptest.Configs()) || r.Baseline != "pytorch" {
		t.Fatalf("%d tables, baseline %q", len(tables), r.Baseline)
	}
	for _, tab := range tables {
		for _, row := range tab.Rows {
			switch {
			case row.Backend == "pytorch" && row.Status == result.StatusOK:
				if row.Ratio != 1 || !row.IsBaseline {
					t.Errorf("%s pytorch: ratio %v baseline %v", tab.Label, row.Ratio, row.IsBaseline)
				}
			case row.Status == result.StatusOOM:
				if !math.IsNaN(row.MedianMs) || row.Correct {
					t.Errorf("%s %s oom: median %v correct %v", tab.Label, row.Backend, row.MedianMs, row.Correct)
				}
			}
			if row.Status == result.StatusOK {
				// sweeptest times calls at Efficiency * PeakTFLOPs plus an
				// overhead, so % of peak sits just under the efficiency.
				eff := 100 * sweeptest.Backends[map[string]int{"burnstyle-hip": 0, "pytorch": 1}[row.Backend]].Efficiency[tab.Config.Get("ttt_type")]
				if row.PctPeak > eff || row.PctPeak < 0.8*eff {
					t.Errorf("%s %s: %.1f%% of peak, want just under %.0f%%", tab.Label, row.Backend, row.PctPeak, eff)
				}
				wantVerdict := "pass"
				if row.Backend == "burnstyle-hip" && tab.Config.Get("ttt_type") == "mlp" {
					wantVerdict = "FAIL"
				}
				if row.Verified != wantVerdict || row.Correct != (wantVerdict == "pass") {
					t.Errorf("%s %s: verified %q correct %v", tab.Label, row.Backend, row.Verified, row.Correct)
				}
			}
		}
	}
}

func TestLoadBaseline(t *testing.T) {
	dir := t.TempDir()
	if err := sweeptest.Write(dir, sweeptest.Sweep("run-1")); err != nil {
		t.Fatal(err)
	}
	if r, err := Load(dir, "burnstyle-hip"); err != nil || r.Baseline != "burnstyle-hip" {
		t.Errorf("--baseline burnstyle-hip: %v", err)
	}
	if _, err := Load(dir, "jax"); err == nil || !strings.Contains(err.Error(), "jax") {
		t.Errorf("unknown baseline: %v", err)
	}
}

// TestSeriesPerDevice: a folder with one backend on two kinds of device
// draws two series, and --baseline may name the backend alone.
func TestSeriesPerDevice(t *testing.T) {
	dir := t.TempDir()
	gpu := sweeptest.Sweep("run-1")[:4]
	var host []result.Result
	for _, r := range gpu {
		r.Device, r.RunID = result.Device{Kind: "cpu", Name: "x86", Count: 1}, "run-2" // a run folder names files by backend and configuration only
		host = append(host, r)
	}
	if err := sweeptest.Write(dir, append(gpu, host...)); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir, "burnstyle-hip")
	if err != nil {
		t.Fatal(err)
	}
	h100 := "burnstyle-hip (" + sweeptest.Device.Name + ")"
	if strings.Join(r.Backends, ",") != h100+",burnstyle-hip (cpu x86)" || r.Baseline != h100 || r.Superseded != 0 {
		t.Errorf("series %v, baseline %q, superseded %d", r.Backends, r.Baseline, r.Superseded)
	}
	if err := r.SetBaseline("burnstyle-hip (cpu x86)"); err != nil || r.Baseline != "burnstyle-hip (cpu x86)" {
		t.Errorf("SetBaseline: %v", err)
	}
	for _, tab := range r.Tables() {
		if len(tab.Rows) != 2 {
			t.Errorf("%s: %d rows, want one per device", tab.Label, len(tab.Rows))
		}
		// Each row is the baseline of its own device: no ratio across devices.
		for _, row := range tab.Rows {
			if !row.IsBaseline || row.Status == result.StatusOK && row.Ratio != 1 {
				t.Errorf("%s %s: baseline %v ratio %v, want its own device's baseline", tab.Label, row.Backend, row.IsBaseline, row.Ratio)
			}
		}
	}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	devices := map[string]int{}
	for _, c := range charts {
		dev := "cpu x86"
		if strings.HasSuffix(c.Name, "-"+slug(sweeptest.Device.Name)) {
			dev = sweeptest.Device.Name
		} else if !strings.HasSuffix(c.Name, "-cpu-x86") {
			t.Errorf("chart %s is not named by its device", c.Name)
		}
		devices[dev]++
		if !strings.HasSuffix(c.Title, "("+dev+")") {
			t.Errorf("chart %s title %q does not name %s", c.Name, c.Title, dev)
		}
	}
	if devices["cpu x86"] == 0 || devices["cpu x86"] != devices[sweeptest.Device.Name] {
		t.Errorf("charts per device %v, want the same charts for each", devices)
	}
}

// TestSectionPerModel: a folder holding an H100 run and a newer H200 run
// of the same sweep keeps both (neither is an "older duplicate"), gives
// each model its own section of the page with its own ratios and fast_p,
// and applies the H100's calibration to the H100 rows only. The summary
// CSV is pinned by a golden file.
func TestSectionPerModel(t *testing.T) {
	dir := t.TempDir()
	var h100 []result.Result
	for _, r := range sweeptest.Sweep("run-h100") {
		if r.Config.Get("model_size") == "125m" && r.Config.Get("ttt_type") == "linear" && r.Config.Phase == "forward" {
			h100 = append(h100, r)
		}
	}
	if err := sweeptest.Write(dir, append(h100, sweeptest.OnDevice(h100, sweeptest.H200, 0.7, "run-h200")...)); err != nil {
		t.Fatal(err)
	}
	if err := sweeptest.WriteCalibration(dir, sweeptest.Calibration("run-h100")); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Superseded != 0 || len(r.Results) != 2*len(h100) {
		t.Fatalf("kept %d of %d results (%d superseded): an H200 result is no newer H100 result", len(r.Results), 2*len(h100), r.Superseded)
	}
	for _, tab := range r.Tables() {
		for _, row := range tab.Rows {
			onH100 := strings.Contains(row.Backend, "H100")
			if row.Calibration != onH100 {
				t.Errorf("%s %s: calibrated %v, want the H100 calibration on H100 rows only", tab.Label, row.Backend, row.Calibration)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{`id="device-nvidia-h100-80gb-hbm3">Device: NVIDIA H100 80GB HBM3`, `id="device-nvidia-h200">Device: NVIDIA H200`,
		"report-time-vs-seq-len-nvidia-h200.svg", "report-time-vs-seq-len-nvidia-h100-80gb-hbm3.svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "older duplicates") {
		t.Error("page calls results of another model older duplicates")
	}
	csv, err := os.ReadFile(filepath.Join(filepath.Dir(out), "report-summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := os.ReadFile(filepath.Join(filepath.Dir(out), "report-fastp.csv"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "two_models.golden", string(fp)+"\n"+string(csv))
}
