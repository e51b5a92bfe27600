package report

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/plot"
)

// chromium finds Debian's chromium (or another headless-capable build).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("XBENCH_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("XBENCH_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH; set XBENCH_REQUIRE_CHROMIUM=1 to make this a failure")
	return ""
}

// TestReportInChromium opens the report the way a reader would, in a
// headless browser with no network, and checks from the screenshot that
// the page and its charts were drawn: a picture of the right size, not one
// colour, with enough ink, and with both backends' line colours on it.
// XBENCH_SCREENSHOT=path keeps the screenshot for a person to look at.
func TestReportInChromium(t *testing.T) {
	bin := chromium(t)
	r := standard(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "screenshot.png")
	// The deadline only stops a hung browser; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1400,3000", "file://"+out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, msg)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	if keep := os.Getenv("XBENCH_SCREENSHOT"); keep != "" {
		raw, _ := os.ReadFile(shot)
		if err := os.WriteFile(keep, raw, 0o644); err != nil {
			t.Errorf("keep screenshot: %v", err)
		}
	}
	b := img.Bounds()
	if b.Dx() != 1400 || b.Dy() != 3000 {
		t.Errorf("screenshot is %dx%d, want 1400x3000", b.Dx(), b.Dy())
	}
	ink, colours := 0, map[color.RGBA]bool{}
	near := make([]int, 2) // pixels in the first two backends' colours
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := rgba(img, x, y)
			colours[c] = true
			if int(c.R)+int(c.G)+int(c.B) < 3*235 {
				ink++
			}
			for i := range near {
				if nearColor(c, rgbaOf(plot.Color(i))) {
					near[i]++
				}
			}
		}
	}
	frac := float64(ink) / float64(b.Dx()*b.Dy())
	t.Logf("screenshot %s: %d colours, %.1f%% ink, backend colour pixels %v", shot, len(colours), 100*frac, near)
	if len(colours) < 16 {
		t.Errorf("screenshot has %d distinct colours: the page did not render", len(colours))
	}
	if frac < 0.02 {
		t.Errorf("only %.2f%% of the screenshot is not white: the charts did not render", 100*frac)
	}
	for i, n := range near {
		if n < 200 {
			t.Errorf("only %d pixels in %s's colour: its lines were not drawn", n, r.Backends[i])
		}
	}
}

func rgba(img image.Image, x, y int) color.RGBA {
	return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
}

func rgbaOf(c color.Color) color.RGBA { return color.RGBAModel.Convert(c).(color.RGBA) }

func nearColor(a, b color.RGBA) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R)+d(a.G, b.G)+d(a.B, b.B) < 40
}

// TestLayoutInChromium lays out every kind of report the committed H100
// results make (TTT, attention with another run's calibration, GEMM's 426
// shapes, the scan's analysis set, a problem set) and the standard sweep in
// headless Chromium and fails on any text that overlaps another (legend
// entries and labels included), runs over the edge of a cell or bar, is
// drawn in other widths than the charts were laid out with, or a link of
// the page that leads nowhere.
// XBENCH_SCREENSHOT_H100=path keeps a screenshot of the H100 report
// (docs/report-h100.png is made that way); XBENCH_SCREENSHOT_SEQLEN=path
// one of the attention sweep's throughput-against-seq_len chart alone
// (docs/h100-attention/throughput-vs-seq-len.png).
func TestLayoutInChromium(t *testing.T) {
	chromium(t)
	root := filepath.Join("..", "..", "results")
	kinds := []struct {
		name, results, baseline string
		calibrations            string // a glob of calibration files to add
		verify                  string // a folder of verify records beside the results
	}{
		{"h100", "h100", "", "", ""},
		// The sweep ran without calibrating; docs/h100-attention is made
		// with the H100 GEMM run's calibration (xbench report
		// --calibration), whose percent-of-peak legends are the longer
		// text to lay out.
		{"h100-attention", filepath.Join("h100-attention", "sweep"), "", filepath.Join("h100-gemm", "*", CalibrationFile),
			filepath.Join("h100-attention", "verify")},
		{"h100-gemm", "h100-gemm", "", "", ""},
		{"h100-scan", "h100-scan", "flash-semicrf", "", ""},
		{"h100-problems", "h100-kernelbench", "", "", ""},
		// The verify records sit beside the results (results/h100-iree/verify)
		// and are found without --verify.
		{"h100-iree", filepath.Join("h100-iree", "gemm"), "", "", ""},
	}
	kinds = append(kinds, struct {
		name, results, baseline string
		calibrations            string
		verify                  string
	}{name: "standard"})
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			// Each kind loads, writes and lays out its own report; Chromium
			// waits on its virtual time budget, so two at a time is faster
			// even on two cores.
			t.Parallel()
			var r *Report
			if k.name == "standard" {
				r = standard(t)
			} else {
				var err error
				if r, err = Load(filepath.Join(root, k.results), k.baseline); err != nil {
					t.Fatal(err)
				}
			}
			if k.verify != "" {
				if err := r.AddVerify(filepath.Join(root, k.verify)); err != nil {
					t.Fatal(err)
				}
			}
			if k.calibrations != "" {
				cals, _ := filepath.Glob(filepath.Join(root, k.calibrations))
				for _, c := range cals {
					if err := r.AddCalibration(c); err != nil {
						t.Fatal(err)
					}
				}
			}
			out := filepath.Join(t.TempDir(), "report.html")
			if _, err := r.Write(out); err != nil {
				t.Fatal(err)
			}
			for _, b := range brokenLinks(t, out) {
				t.Errorf("broken link %s", b)
			}
			page, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, win := range windows {
				l := layoutIn(t, out, win.w, win.h)
				if figures := strings.Count(string(page), "<figure"); len(l.Charts) < 2 || len(l.Charts) != figures {
					t.Errorf("%dx%d: %d charts measured of the page's %d figures, want every one (and at least 2)", win.w, win.h, len(l.Charts), figures)
				}
				bars := 0
				for _, c := range l.Charts {
					bars += len(c.Bars)
				}
				t.Logf("%dx%d: %d charts, %d bars measured", win.w, win.h, len(l.Charts), bars)
				for _, p := range layoutProblems(l) {
					t.Errorf("%dx%d: %s", win.w, win.h, p)
				}
			}
			if keep := os.Getenv("XBENCH_SCREENSHOT_H100"); keep != "" && k.name == "h100" {
				screenshot(t, out, keep, 1400, 4200)
			}
			if keep := os.Getenv("XBENCH_SCREENSHOT_SEQLEN"); keep != "" && k.name == "h100-attention" {
				screenshot(t, figureOnly(t, out, "throughput-vs-seq-len"), keep, 1200, 2300)
			}
		})
	}
}

// TestLayoutCheckCatchesFallbackFont: the check above has teeth. With the
// charts' text set in DejaVu Sans (wider than Liberation Sans), as a
// browser without the embedded font would draw it, it reports the wrong
// widths and the heat map's row labels running into the first column.
func TestLayoutCheckCatchesFallbackFont(t *testing.T) {
	r, err := Load(filepath.Join("..", "..", "results", "h100"), "")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	wide := strings.ReplaceAll(string(raw), "font-family:'"+plot.FontFamily+"'", "font-family:'DejaVu Sans'")
	if err := os.WriteFile(out, []byte(wide), 0o644); err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(layoutProblems(layoutIn(t, out, 1440, 900)), "\n")
	for _, want := range []string{"wide in the browser", `ratio-heatmap-nvidia-h100-80gb-hbm3: text "125m linear float32 L=2048" runs over the edge`} {
		if !strings.Contains(problems, want) {
			t.Errorf("with a fallback font the check reports no %q; it reported:\n%s", want, problems)
		}
	}
}

// screenshot saves Chromium's picture of page at w x h to path.
func screenshot(t *testing.T, page, path string, w, h int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, chromium(t), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--virtual-time-budget=15000",
		fmt.Sprintf("--screenshot=%s", abs), fmt.Sprintf("--window-size=%d,%d", w, h), "file://"+page)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot %s: %v\n%s", page, err, msg)
	}
}

// figureOnly writes a copy of page that shows only the figure with id (its
// chart and caption, as the page lays them out) and returns its path.
func figureOnly(t *testing.T, page, id string) string {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	css := "<style>body > :not(#" + id + ") { display: none; } body { margin: 0.5em auto; }</style>"
	src := strings.Replace(string(raw), "</head>", css+"</head>", 1)
	out := filepath.Join(filepath.Dir(page), id+".html")
	if err := os.WriteFile(out, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
