package sweep

// Why not a progress library (issue 17 asked about
// github.com/schollz/progressbar/v3): what such a library does is draw
// "[####....] 3/10" with \r and estimate the rest from the time per unit
// of progress. Neither fits here. Off a terminal (CI, SLURM task output,
// device logs) the sweep must print one plain line per cell, which scripts
// and tests grep ("[773/1704] pytorch ... ok, median 0.0533 ms (0.1s, ETA
// ~1h7m10s)"): a bar library has no such mode, so that path is ours either
// way. On a terminal, its ETA is wall time since start over progress, which
// counts every backend's start-up and first compilation and treats a
// 4096-cube GEMM like a 64-cube one; ours weights cells by estimated cost
// and charges a cell only its own compilation and calls (cellTime), divided
// over the workers. Fed our weights and with its ETA hidden, the library
// would be left drawing the bar (a dozen lines below), while log lines and
// failures printed above the bar still need our lock and clearing. So the
// bar stays ours.

import (
	"github.com/xbench/xbench/harness/workload"

	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xbench/xbench/harness/result"
)

// Event is one cell reaching a file (or found finished already).
type Event struct {
	Worker   string
	Cell     Cell
	Result   result.Result
	Took     time.Duration
	Existing bool // finished by an earlier invocation; nothing ran
}

// Progress shows how far a sweep is: a redrawn bar with an ETA on a
// terminal, one plain line per cell otherwise (logs, CI, SLURM output).
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	width    int
	now      func() time.Time

	total, done, workers int
	counts               map[result.Status]int
	weight               map[string]float64 // per cell key, for the ETA
	remaining            float64            // weight of cells without a file
	ranWeight            float64            // weight of cells that ran
	ranTime              time.Duration
	start                time.Time
	running              map[string]runningCell // by worker
	deadline             time.Time              // the sweep's --budget ends here (zero: none)
	barShown             bool
	// heartbeat: off a terminal, a cell running this long gets a "still
	// running" line each time it passes another multiple (0: never).
	heartbeat time.Duration
	stop      chan struct{}
}

// runningCell is a cell a worker has begun.
type runningCell struct {
	what   string
	since  time.Time
	weight float64
	beats  int // heartbeat lines printed for it
}

// NewProgress writes to w; terminal selects the redrawn bar.
func NewProgress(w io.Writer, terminal bool) *Progress {
	p := &Progress{w: w, terminal: terminal, width: 100, now: time.Now, heartbeat: time.Minute}
	if f, ok := w.(*os.File); ok && terminal {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 20 {
			p.width = int(ws.Col)
		}
	}
	return p
}

// IsTerminal reports whether w is a terminal (not a file, pipe or /dev/null).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Start announces the cells of this invocation.
func (p *Progress) Start(total, workers int, cells []Cell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.workers, p.start = total, max(workers, 1), p.now()
	p.counts, p.weight, p.running = map[result.Status]int{}, map[string]float64{}, map[string]runningCell{}
	// ETA weights: a fixed part per cell (start-up, compilation, warmup)
	// plus a part proportional to the estimated cost. Rough, by design.
	var sum float64
	for _, c := range cells {
		sum += c.Cost()
	}
	mean := sum / float64(max(len(cells), 1))
	for _, c := range cells {
		w := 1.0
		if mean > 0 {
			w += c.Cost() / mean
		}
		p.weight[c.Key()] = w
		p.remaining += w
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "sweep: %d cells, %d worker(s)\n", total, p.workers)
	}
	// A cell of minutes must not look like a hang: the bar's elapsed time
	// ticks every second, and a log gets a line a minute.
	if p.stop == nil && (p.terminal || p.heartbeat > 0) {
		p.stop = make(chan struct{})
		every := time.Second
		if !p.terminal {
			every = p.heartbeat / 4
		}
		go func(stop chan struct{}) {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					p.Tick()
				}
			}
		}(p.stop)
	}
}

// Tick redraws the bar with the running cell's elapsed time, or off a
// terminal prints a "still running" line for a cell that passed another
// heartbeat. Start calls it on a timer.
func (p *Progress) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		p.draw()
		return
	}
	if p.heartbeat <= 0 {
		return
	}
	now := p.now()
	for worker, rc := range p.running {
		if n := int(now.Sub(rc.since) / p.heartbeat); n > rc.beats {
			rc.beats = n
			p.running[worker] = rc
			line := fmt.Sprintf("still running: %s (%s so far", rc.what, now.Sub(rc.since).Round(time.Second))
			if eta, ok := p.eta(); ok {
				line += ", ETA " + eta
			}
			fmt.Fprintln(p.w, strings.TrimSpace(worker+" "+line+")"))
		}
	}
}

// SetDeadline makes the ETA say when the sweep's budget ends first.
func (p *Progress) SetDeadline(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deadline = t
}

// Begin notes that a worker started a cell.
func (p *Progress) Begin(worker string, c Cell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[worker] = runningCell{what: Describe(c), since: p.now(), weight: p.weight[c.Key()]}
	p.draw()
}

// BeginBatch notes that a worker sent several cells in one round trip
// (batch.go): until the first of them has its file, the bar and the
// heartbeat show the batch, weighted as all its cells.
func (p *Progress) BeginBatch(worker string, cells []Cell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var weight float64
	for _, c := range cells {
		weight += p.weight[c.Key()]
	}
	p.running[worker] = runningCell{what: fmt.Sprintf("a batch of %d cells from %s", len(cells), Describe(cells[0])),
		since: p.now(), weight: weight}
	p.draw()
}

// Cell records a cell that has its file now.
func (p *Progress) Cell(ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := ev.Cell.Key()
	p.done++
	p.counts[ev.Result.Status]++
	p.remaining -= p.weight[key]
	delete(p.running, ev.Worker)
	if !ev.Existing && ev.Result.Status != result.StatusSkipped {
		p.ranWeight += p.weight[key]
		p.ranTime += cellTime(ev)
	}
	if ev.Existing {
		p.draw()
		return
	}
	line := fmt.Sprintf("[%d/%d] %s: %s", p.done, p.total, Describe(ev.Cell), outcome(ev.Result))
	if ev.Took > 0 {
		line += fmt.Sprintf(" (%.1fs", ev.Took.Seconds())
		if eta, ok := p.eta(); ok {
			line += ", ETA " + eta
		}
		line += ")"
	}
	if ev.Worker != "" {
		line = ev.Worker + " " + line
	}
	if p.terminal {
		// Only what needs a look keeps a line of its own; the bar says the rest.
		if ev.Result.Status != result.StatusOK {
			p.above(line)
		}
		p.draw()
		return
	}
	fmt.Fprintln(p.w, line)
}

// Finish ends the bar with the final counts.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	if p.terminal && p.barShown {
		fmt.Fprint(p.w, "\r\033[K")
		p.barShown = false
	}
	fmt.Fprintf(p.w, "sweep: %d of %d cells have a file (%s) after %s\n", p.done, p.total, countsText(p.counts), p.now().Sub(p.start).Round(time.Second))
}

// Write lets log lines through without tearing the bar.
func (p *Progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.above(strings.TrimRight(string(b), "\n"))
	p.draw()
	return len(b), nil
}

func (p *Progress) above(line string) {
	if p.terminal && p.barShown {
		fmt.Fprint(p.w, "\r\033[K")
		p.barShown = false
	}
	fmt.Fprintln(p.w, line)
}

func (p *Progress) draw() {
	if !p.terminal || p.total == 0 {
		return
	}
	const barLen = 24
	filled := barLen * p.done / p.total
	bar := strings.Repeat("#", filled) + strings.Repeat(".", barLen-filled)
	s := fmt.Sprintf("[%s] %d/%d %s | %s", bar, p.done, p.total, countsText(p.counts), p.now().Sub(p.start).Round(time.Second))
	if eta, ok := p.eta(); ok {
		s += ", ETA " + eta
	}
	// The longest-running cell, with how long it has run.
	var longest runningCell
	var who string
	for worker, rc := range p.running {
		if longest.what == "" || rc.since.Before(longest.since) {
			longest, who = rc, worker
		}
	}
	if longest.what != "" {
		s += fmt.Sprintf(" | %s %s", strings.TrimSpace(who+" "+longest.what), p.now().Sub(longest.since).Round(time.Second))
	}
	if len(s) > p.width-1 {
		s = s[:p.width-1]
	}
	fmt.Fprint(p.w, "\r\033[K"+s)
	p.barShown = true
}

// cellTime is what a cell cost the sweep for the ETA: for a finished
// timing, its compilation plus warm-up and timed calls at the mean, so the
// first cell of a backend does not count the backend's start (which the
// later cells do not pay); otherwise the wall time it took.
func cellTime(ev Event) time.Duration {
	r := ev.Result
	if r.Status != result.StatusOK || r.Stats == nil {
		return ev.Took
	}
	calls := float64(r.Config.Warmup + r.Config.Repeats)
	own := time.Duration((r.CompileMs + calls*r.Stats.MeanMs) * float64(time.Millisecond))
	if ev.Took > 0 && own > ev.Took {
		return ev.Took
	}
	return own
}

// eta extrapolates the time per unit of weight of the cells that ran. A
// cell still running counts too once it has run longer than its weight
// predicts (its time so far is a lower bound), so a slow cell raises the
// estimate while it runs instead of after; and the time it has already
// run is taken off what is left. That makes the estimate converge rather
// than grow by a step at each slow cell's end.
func (p *Progress) eta() (string, bool) {
	if p.ranWeight == 0 {
		return "", false
	}
	rate := float64(p.ranTime) / p.ranWeight // time per unit of weight
	var runningTime time.Duration
	var runningWeight float64
	now := p.now()
	for _, rc := range p.running {
		runningTime += now.Sub(rc.since)
		runningWeight += rc.weight
	}
	if runningWeight > 0 {
		rate = max(rate, float64(p.ranTime+runningTime)/(p.ranWeight+runningWeight))
	}
	left := rate * max(p.remaining-runningWeight, 0) // cells not begun
	for _, rc := range p.running {
		left += max(rate*rc.weight-float64(now.Sub(rc.since)), 0)
	}
	eta := time.Duration(left / float64(p.workers))
	text := "~" + eta.Round(time.Second).String()
	if !p.deadline.IsZero() {
		if budget := p.deadline.Sub(now); eta > budget {
			// Cells are begun cheapest first until the budget ends; the
			// fraction of the remaining weight that fits is what will run.
			fits := 0.0
			if eta > 0 {
				fits = max(float64(budget), 0) / float64(eta)
			}
			text += fmt.Sprintf(" > --budget left %s: ~%.0f%% of the rest will run", max(budget, 0).Round(time.Second), 100*fits)
		}
	}
	return text, true
}

func countsText(c map[result.Status]int) string {
	var parts []string
	for _, st := range Statuses {
		if c[st] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, c[st]))
		}
	}
	if len(parts) == 0 {
		return "none yet"
	}
	return strings.Join(parts, ", ")
}

func outcome(r result.Result) string {
	if r.Status == result.StatusOK && r.Stats != nil {
		return fmt.Sprintf("ok, median %.3g ms", r.Stats.MedianMs)
	}
	msg := r.Message
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 160 {
		msg = msg[:160] + "..."
	}
	if msg == "" {
		return string(r.Status)
	}
	return string(r.Status) + ": " + msg
}

// Describe names a cell for people.
func Describe(c Cell) string {
	return c.Backend + " " + workload.Label(c.Config) + " on " + c.Device
}
