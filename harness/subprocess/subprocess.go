// Package subprocess runs a backend that speaks JSON lines on stdin/stdout
// (docs/protocol.md) and presents it as a backend.Backend. It is what the Go
// plugin process wraps around every Python backend.
package subprocess

import (
	"strconv"

	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// nonFinite finds a bare NaN or Infinity value (after ':', ',' or '[').
var nonFinite = regexp.MustCompile(`[:,\[]\s*-?(NaN|Infinity)\s*[,\]}]`)

// Backend is one long-lived child process. It starts on the first call and
// stays alive for every later one, so imports and compilation are paid once.
type Backend struct {
	argv []string
	env  []string
	dir  string
	log  io.Writer

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Reader
	tail   *tailBuffer
	nextID int
	exited chan struct{}
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.BatchRunner = (*Backend)(nil)
	_ backend.RawRunner   = (*Backend)(nil)
)

// New prepares (but does not start) a backend process. Its stderr is copied
// to log and its last lines are kept for failure messages.
func New(argv, env []string, dir string, log io.Writer) *Backend {
	return &Backend{argv: argv, env: env, dir: dir, log: log, tail: newTailBuffer(40)}
}

type request struct {
	ID      int    `json:"id"`
	Op      string `json:"op"`
	Request any    `json:"request,omitempty"`
	// Requests carries op "run_batch": many configurations, one round trip.
	Requests []backend.RunRequest `json:"requests,omitempty"`
}

type reply struct {
	ID    int    `json:"id"`
	Error string `json:"error,omitempty"`
	// Protocol is the protocol version the backend speaks, in its info
	// reply; Info is decoded only once that matches (Info()).
	Protocol *int            `json:"protocol,omitempty"`
	Info     json.RawMessage `json:"info,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Results answers op "run_batch", one per request, in order.
	Results []json.RawMessage       `json:"results,omitempty"`
	Export  *backend.ExportResponse `json:"export,omitempty"`
	// Calibration answers the optional "calibrate" op (calibrate.go).
	Calibration *backend.Calibration `json:"calibration,omitempty"`
	// Profile answers the optional "profile" op (profile.go).
	Profile *backend.ProfileReport `json:"profile,omitempty"`
	// Compiled answers the optional "compile" op (compile.go).
	Compiled *backend.Compiled `json:"compiled,omitempty"`
	// Burst answers the optional "burst_prepare" and "burst" ops (burst.go).
	Burst *backend.BurstReport `json:"burst,omitempty"`
}

// declined says whether an error reply is a backend's "no" to an optional
// op: "unknown op" from a program that predates it, or the framework's own
// words (e.g. "cannot profile").
func declined(rep reply, words ...string) bool {
	if rep.Error == "" {
		return false
	}
	for _, w := range append(words, "unknown op") {
		if strings.Contains(rep.Error, w) {
			return true
		}
	}
	return false
}

func (b *Backend) start() error {
	if b.cmd != nil {
		return nil
	}
	cmd := exec.Command(b.argv[0], b.argv[1:]...)
	cmd.Dir, cmd.Env = b.dir, b.env
	// It stays in this process's group, which the harness made for the
	// plugin (harness/plugin), so a timeout or restart that kills the group
	// ends the program and everything it spawned. Pdeathsig ends it when
	// this process dies without the chance to kill it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// A grandchild holding stderr open must not keep Wait (and the request
	// that waits on it) blocked after the program itself is gone.
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("start %s: %w", b.argv[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("start %s: %w", b.argv[0], err)
	}
	cmd.Stderr = io.MultiWriter(b.log, b.tail)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", b.argv[0], err)
	}
	b.cmd, b.stdin, b.lines = cmd, stdin, bufio.NewReaderSize(stdout, 1<<20)
	b.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(b.exited) }()
	return nil
}

// call sends one request and reads its reply; ctx cancellation kills the
// program, since a hung backend cannot be interrupted politely.
func (b *Backend) call(ctx context.Context, op string, req any) (reply, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(); err != nil {
		return reply{}, err
	}
	b.nextID++
	id := b.nextID
	r := request{ID: id, Op: op, Request: req}
	if reqs, ok := req.(batch); ok {
		r = request{ID: id, Op: op, Requests: reqs}
	}
	line, err := json.Marshal(r)
	if err != nil {
		return reply{}, fmt.Errorf("encode %s request: %w", op, err)
	}
	if _, err := b.stdin.Write(append(line, '\n')); err != nil {
		return reply{}, b.died(op, err)
	}
	type readResult struct {
		line []byte
		err  error
	}
	got := make(chan readResult, 1)
	go func() {
		l, err := readLine(b.lines, MaxReplyBytes())
		got <- readResult{l, err}
	}()
	select {
	case <-ctx.Done():
		b.killLocked()
		return reply{}, fmt.Errorf("%s: %w", op, ctx.Err())
	case r := <-got:
		var big *ReplyTooLarge
		if errors.As(r.err, &big) {
			// The rest of the line is still in the pipe: the stream is lost.
			b.killLocked()
			return reply{}, fmt.Errorf("%s: %w", op, big)
		}
		if r.err != nil {
			return reply{}, b.died(op, r.err)
		}
		var rep reply
		if err := json.Unmarshal(r.line, &rep); err != nil {
			b.killLocked()
			if nonFinite.Match(r.line) {
				// Python's json writes NaN and Infinity, which JSON has no
				// words for; say so rather than "invalid character 'N'".
				return reply{}, fmt.Errorf("%s: backend reply holds NaN or Infinity, which JSON cannot carry (a sample or statistic that is not a finite number?): %q", op, truncate(r.line, 200))
			}
			return reply{}, fmt.Errorf("%s: backend wrote a line that is not a JSON reply (%q): %w", op, truncate(r.line, 200), err)
		}
		if rep.ID != id {
			b.killLocked()
			return reply{}, fmt.Errorf("%s: reply id %d does not answer request %d", op, rep.ID, id)
		}
		if rep.Error != "" {
			return rep, fmt.Errorf("%s: backend error: %s", op, rep.Error)
		}
		return rep, nil
	}
}

// died reports the exit of the child with the last lines it printed.
func (b *Backend) died(op string, cause error) error {
	select {
	case <-b.exited:
		// How it ended (exit status 3, signal: segmentation fault) says
		// more than the EOF on its stdout.
		if st := b.cmd.ProcessState; st != nil {
			cause = fmt.Errorf("%w; %s", cause, st)
		}
	case <-time.After(2 * time.Second):
	}
	b.killLocked()
	return &ExitError{Op: op, Cause: cause, Tail: b.tail.String()}
}

func (b *Backend) killLocked() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	// Only the program: its group is the plugin's own. What the program
	// spawned dies with the group when the harness restarts the backend,
	// which it does after every killed request.
	_ = b.cmd.Process.Kill()
	<-b.exited
	b.cmd = nil
}

// ExitError is a backend process that went away mid-request.
type ExitError struct {
	Op    string
	Cause error
	Tail  string
}

// Error puts the backend's last words on the first line, where tables and
// logs look; the whole tail travels separately (result.Tail).
func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%s: backend process exited (%v)", e.Op, e.Cause)
	if last := lastLines(e.Tail, 3); last != "" {
		msg += "; last output: " + last
	}
	return msg
}

func lastLines(s string, n int) string {
	var keep []string
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append([]string{l}, keep...)
		}
	}
	return strings.Join(keep, " | ")
}

func (e *ExitError) Unwrap() error { return e.Cause }

// Info asks the backend what it can do. It is the first request of every
// session, so it is where a backend of another protocol version is told
// apart, by name, from one that merely wrote something broken.
func (b *Backend) Info(ctx context.Context) (backend.Info, error) {
	rep, err := b.call(ctx, "info", nil)
	if err != nil {
		return backend.Info{}, err
	}
	if rep.Protocol != nil && *rep.Protocol != backend.ProtocolVersion {
		return backend.Info{}, fmt.Errorf("info: %w", &backend.ProtocolMismatch{Backend: *rep.Protocol})
	}
	if len(rep.Info) == 0 || string(rep.Info) == "null" {
		return backend.Info{}, errors.New("info: reply has no info object")
	}
	var info backend.Info
	if err := json.Unmarshal(rep.Info, &info); err != nil {
		if rep.Protocol == nil {
			// Protocol 1 had no "protocol" field, and its capabilities
			// were lists of names, which protocol 2's objects cannot hold.
			return backend.Info{}, fmt.Errorf("info: %w", &backend.ProtocolMismatch{Backend: 1,
				Detail: fmt.Sprintf("its info reply has no \"protocol\" field and does not read as protocol %d: %v", backend.ProtocolVersion, err)})
		}
		return backend.Info{}, fmt.Errorf("info: the info object does not match the protocol: %w", err)
	}
	return info, nil
}

// Run times one configuration. A reply that breaks the schema becomes a
// failed result naming the field, never a crash of the harness.
func (b *Backend) Run(ctx context.Context, req backend.RunRequest) (result.Result, error) {
	rep, err := b.call(ctx, "run", req)
	if err != nil {
		var exit *ExitError
		if errors.As(err, &exit) {
			r := failedResult(req, exitMessage(exit))
			r.Tail = exit.Tail
			return r, nil
		}
		return result.Result{}, err
	}
	res, err := result.DecodeBackendResult(rep.Result)
	if err != nil {
		return failedResult(req, "backend returned an invalid result: "+err.Error()), nil
	}
	return res, nil
}

// RunRaw is Run without decoding: the result bytes as the program wrote
// them (a crash becomes a failed result the harness writes), for the plugin
// layer to pass through to the host, which validates them once.
func (b *Backend) RunRaw(ctx context.Context, req backend.RunRequest) ([]byte, error) {
	rep, err := b.call(ctx, "run", req)
	if err != nil {
		var exit *ExitError
		if errors.As(err, &exit) {
			r := failedResult(req, exitMessage(exit))
			r.Tail = exit.Tail
			return json.Marshal(r)
		}
		return nil, err
	}
	if len(rep.Result) == 0 {
		return nil, errors.New("run: reply has no result object")
	}
	return rep.Result, nil
}

// RunBatch sends every request in one "run_batch" round trip; each result
// is checked against the schema like Run's, an invalid one becoming failed.
// A process that dies during the batch is an error, not a failed result for
// every request: one of them crashed it, and which is known only once they
// run again one by one (backend.BatchRunner). A program that predates the
// op answers "unknown op": backend.ErrCannotBatch.
func (b *Backend) RunBatch(ctx context.Context, reqs []backend.RunRequest) ([]result.Result, error) {
	rep, err := b.call(ctx, "run_batch", batch(reqs))
	if err != nil {
		if declined(rep) {
			return nil, fmt.Errorf("%w: %s", backend.ErrCannotBatch, rep.Error)
		}
		return nil, err
	}
	if len(rep.Results) != len(reqs) {
		return nil, fmt.Errorf("run_batch: backend returned %d results for %d requests", len(rep.Results), len(reqs))
	}
	out := make([]result.Result, len(reqs))
	for i, raw := range rep.Results {
		res, err := result.DecodeBackendResult(raw)
		if err != nil {
			res = failedResult(reqs[i], "backend returned an invalid result: "+err.Error())
		}
		out[i] = res
	}
	return out, nil
}

// batch marks a run_batch payload, which travels as "requests".
type batch []backend.RunRequest

// exitMessage says a backend died during a run, with the last line it
// printed (a Python traceback's last line is the exception).
func exitMessage(exit *ExitError) string {
	msg := fmt.Sprintf("backend process exited during run: %v", exit.Cause)
	if last := lastLines(exit.Tail, 1); last != "" {
		msg += "; last output: " + last
	}
	return msg
}

// failedResult is a failure the harness reports for the backend. It must
// itself pass the schema check on the harness side (device kind, samples
// list), or that check's complaint would replace the reason.
func failedResult(req backend.RunRequest, msg string) result.Result {
	kind := req.Device
	if kind != "cuda" && kind != "rocm" {
		kind = "cpu"
	}
	return result.Result{Status: result.StatusFailed, Config: req.Config, Message: msg,
		Device: result.Device{Kind: kind}, SamplesMs: []float64{}}
}

// Export has the backend write its outputs for verification.
func (b *Backend) Export(ctx context.Context, req backend.ExportRequest) (backend.ExportResponse, error) {
	rep, err := b.call(ctx, "export", req)
	if err != nil {
		return backend.ExportResponse{}, err
	}
	if rep.Export == nil {
		return backend.ExportResponse{}, errors.New("export: reply has no export object")
	}
	return *rep.Export, nil
}

// Close asks the backend to exit and kills it if it does not within 1.5 s:
// go-plugin gives this whole plugin process 2 s before it kills it, and a
// framework's interpreter teardown must not turn a clean stop into a kill.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return nil
	}
	line, _ := json.Marshal(request{ID: b.nextID + 1, Op: "shutdown"})
	_, _ = b.stdin.Write(append(line, '\n'))
	_ = b.stdin.Close()
	select {
	case <-b.exited:
		b.cmd = nil
	case <-time.After(1500 * time.Millisecond):
		b.killLocked()
	}
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// Environ is the environment for a child: this process's, plus extra.
func Environ(extra ...string) []string { return append(os.Environ(), extra...) }

// DefaultMaxReplyBytes caps one reply line from a backend. A result is a
// few kilobytes; a reply of many megabytes is a broken backend, and holding
// it (then writing it into every report) would cost memory without bound.
const DefaultMaxReplyBytes = 16 << 20

// MaxReplyEnv overrides the cap (xbench --max-reply sets it for plugins).
const MaxReplyEnv = "XBENCH_MAX_REPLY_BYTES"

// MaxReplyBytes is the cap in force.
func MaxReplyBytes() int {
	if n, err := strconv.Atoi(os.Getenv(MaxReplyEnv)); err == nil && n > 0 {
		return n
	}
	return DefaultMaxReplyBytes
}

// ReplyTooLarge is a reply line over the cap.
type ReplyTooLarge struct{ Limit int }

func (e *ReplyTooLarge) Error() string {
	return fmt.Sprintf("backend reply is larger than %d bytes (the --max-reply cap); it was discarded", e.Limit)
}

// readLine reads one line of at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, &ReplyTooLarge{Limit: limit}
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}
