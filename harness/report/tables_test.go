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
