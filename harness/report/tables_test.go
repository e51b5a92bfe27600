package report

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tablesProbe clicks a summary table's "median ms" head twice and types a
// filter into the folded configurations' box, then opens all shown, and
// leaves what it saw in the DOM.
const tablesProbe = `window.addEventListener('load', () => {
  const out = {};
  const t = document.querySelector('div.summary table.sortable');
  const col = [...t.rows[0].cells].findIndex(th => th.textContent === 'median ms');
  const column = () => [...t.rows].slice(1).map(r => r.cells[col].textContent);
  out.before = column();
  t.rows[0].cells[col].click(); out.up = column();
  t.rows[0].cells[col].click(); out.down = column();
  const input = document.querySelector('div.fold-tools input');
  input.value = 'MLP  2048'; input.dispatchEvent(new Event('input'));
  const folds = [...document.querySelectorAll('details.config')];
  out.shown = folds.filter(d => !d.hidden).map(d => d.querySelector('summary').textContent);
  document.querySelector('div.fold-tools .open').click();
  out.open = folds.filter(d => d.open).length;
  out.openHidden = folds.filter(d => d.open && d.hidden).length;
  const pre = document.createElement('pre'); pre.id = 'xbench-probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});`

var probePre = regexp.MustCompile(`(?s)<pre id="xbench-probe">(.*?)</pre>`)

// probeIn opens a copy of page with script added in headless Chromium and
// returns the text script left in <pre id="xbench-probe">.
func probeIn(t *testing.T, page, script string) string {
	t.Helper()
	bin := chromium(t)
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(filepath.Dir(page), "probe.html")
	src := strings.Replace(string(raw), "</body>", "<script>"+script+"</script></body>", 1)
	if err := os.WriteFile(probe, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(probe)
	// The deadline only stops a hung browser; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--virtual-time-budget=10000",
		"--dump-dom", "file://"+probe)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v\n%s", probe, err, stderr.String())
	}
	m := probePre.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe script left nothing in the DOM of %s (%d bytes)", probe, len(dom))
	}
	return html.UnescapeString(string(m[1]))
}

// TestTablesSortAndFilterInChromium: in the page as a reader opens it from
// file://, a click on a column head sorts the table by it (numbers as
// numbers, up then down), and the filter box of a long report shows the
// folded configurations holding every word typed, which "open all shown"
// unfolds, leaving the others shut.
func TestTablesSortAndFilterInChromium(t *testing.T) {
	chromium(t)
	r := standard(t)
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Before, Up, Down, Shown []string
		Open, OpenHidden        int
	}
	if err := json.Unmarshal([]byte(probeIn(t, out, tablesProbe)), &got); err != nil {
		t.Fatal(err)
	}
	nums := func(col []string) []float64 {
		var out []float64
		for _, s := range col {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				out = append(out, f)
			}
		}
		return out
	}
	up, down := nums(got.Up), nums(got.Down)
	if len(up) < 2 || len(up) != len(nums(got.Before)) {
		t.Fatalf("median column %v before, %v after sorting: want the same numbers, at least two", got.Before, got.Up)
	}
	if !slices.IsSorted(up) {
		t.Errorf("after one click the medians read %v, want ascending", got.Up)
	}
	slices.Reverse(down)
	if !slices.IsSorted(down) || len(down) != len(up) {
		t.Errorf("after two clicks the medians read %v, want descending", got.Down)
	}
	var want []string
	for _, tab := range r.Tables() {
		l := strings.ToLower(tab.Label)
		if strings.Contains(l, "mlp") && strings.Contains(l, "2048") {
			want = append(want, tab.Label)
		}
	}
	if len(want) == 0 || len(want) == len(r.Tables()) {
		t.Fatalf("the filter 'mlp 2048' selects %d of %d configurations: the test needs some, not all", len(want), len(r.Tables()))
	}
	if !slices.Equal(got.Shown, want) {
		t.Errorf("filter 'MLP  2048' shows %q, want %q", got.Shown, want)
	}
	if got.Open != len(want) || got.OpenHidden != 0 {
		t.Errorf("open all shown opened %d (%d hidden), want the %d shown", got.Open, got.OpenHidden, len(want))
	}
}

// allProbe picks a backend and a ratio range in the all-configurations
// table, then a verdict alone, and reads which rows stay shown; it also
// reads the sort mark drawn after a column head before and after a click.
const allProbe = `window.addEventListener('load', () => {
  const out = {};
  const tools = document.querySelector('div.all-tools');
  const table = document.querySelector('table.all');
  const set = (cls, v) => { const el = tools.querySelector(cls); el.value = v; el.dispatchEvent(new Event('input')); };
  const shown = () => [...table.rows].slice(1).filter(r => !r.hidden).map(r => r.cells[0].textContent + '|' + r.cells[1].textContent);
  out.total = table.rows.length - 1;
  set('.f-backend', BACKEND); set('.f-lo', '0.5'); set('.f-hi', '0.9');
  out.range = shown();
  set('.f-backend', ''); set('.f-lo', ''); set('.f-hi', ''); set('.f-verdict', 'pass');
  out.pass = shown();
  const th = table.rows[0].cells[3];
  const mark = () => { const s = getComputedStyle(th, '::after'); return s.content + ' ' + s.borderTopWidth + ' ' + s.borderBottomWidth; };
  out.markBefore = mark(); th.click(); out.markUp = mark();
  const pre = document.createElement('pre'); pre.id = 'xbench-probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});`

// TestAllConfigurationsTableInChromium: the one table of every backend on
// every configuration shows, for a backend and a ratio range, exactly the
// rows the summary holds for them; for the verdict "pass", exactly the
// verified rows; and a column head draws a sort mark (a CSS triangle: the
// page's font has no arrow glyphs) that changes when clicked.
func TestAllConfigurationsTableInChromium(t *testing.T) {
	chromium(t)
	r := standard(t)
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	backend := ""
	for _, b := range r.Backends {
		if b != r.Baseline {
			backend = b
			break
		}
	}
	var got struct {
		Total              int
		Range, Pass        []string
		MarkBefore, MarkUp string
	}
	if err := json.Unmarshal([]byte(probeIn(t, out, strings.Replace(allProbe, "BACKEND", strconv.Quote(backend), 1))), &got); err != nil {
		t.Fatal(err)
	}
	var inRange, pass []string
	rows := 0
	for _, tab := range r.Tables() {
		for _, x := range tab.Rows {
			rows++
			if x.Backend == backend && x.Ratio >= 0.5 && x.Ratio <= 0.9 {
				inRange = append(inRange, tab.Label+"|"+x.Backend)
			}
			if x.Status == "ok" && x.Verified == "pass" {
				pass = append(pass, tab.Label+"|"+x.Backend)
			}
		}
	}
	if got.Total != rows {
		t.Errorf("the table has %d rows, want one per result (%d)", got.Total, rows)
	}
	if len(inRange) == 0 || len(pass) == 0 || len(pass) == rows {
		t.Fatalf("the fixture gives %d rows of %s in 0.5-0.9x and %d of %d verified: the test needs some of each", len(inRange), backend, len(pass), rows)
	}
	if !slices.Equal(got.Range, inRange) {
		t.Errorf("%s at 0.5x to 0.9x shows %q, want %q", backend, got.Range, inRange)
	}
	if !slices.Equal(got.Pass, pass) {
		t.Errorf("verdict pass shows %d rows, want the %d verified", len(got.Pass), len(pass))
	}
	t.Logf("sort mark: %q, after a click %q; %d of %d rows in range, %d verified", got.MarkBefore, got.MarkUp, len(inRange), rows, len(pass))
	if got.MarkBefore == got.MarkUp || strings.Contains(got.MarkBefore, "none") || !strings.Contains(got.MarkUp, "px") {
		t.Errorf("sort mark before a click %q, after %q: want a drawn mark that changes", got.MarkBefore, got.MarkUp)
	}
}
