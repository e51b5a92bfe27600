package subprocess

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

var cfg = ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 16,
	MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Warmup: 1, Repeats: 3}.Result()

// script writes a throwaway JSON-lines backend whose run reply is body.
func script(t *testing.T, runBody string) []string {
	t.Helper()
	src := `import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "shutdown":
        break
    if req["op"] == "info":
        print(json.dumps({"id": req["id"], "info": {"name": "t", "capabilities": {}}}), flush=True)
        continue
` + runBody
	p := filepath.Join(t.TempDir(), "b.py")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"python3", p}
}

func TestExampleBackendRoundTrip(t *testing.T) {
	var log bytes.Buffer
	b := New([]string{"python3", "../../docs/example-backend/backend.py"}, os.Environ(), ".", &log)
	defer b.Close()
	ctx := context.Background()
	info, err := b.Info(ctx)
	if err != nil || info.Name != "example" {
		t.Fatalf("info = %+v, %v", info, err)
	}
	res, err := b.Run(ctx, backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != result.StatusOK || len(res.SamplesMs) != 3 {
		t.Fatalf("result %+v", res)
	}
	// The same process answers a second request: it stays alive.
	pid := b.cmd.Process.Pid
	if _, err := b.Run(ctx, backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg}); err != nil || b.cmd.Process.Pid != pid {
		t.Fatalf("second run restarted the process or failed: %v", err)
	}
}

func TestFaultsBecomeFailedResults(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantMsg string
		wantErr string
	}{
		{"schema violation names the field", `    print(json.dumps({"id": req["id"], "result": {"status": "ok", "samples_ms": "fast"}}), flush=True)
`, "/", ""},
		{"crash keeps the last output", `    sys.stderr.write("Traceback: boom\n"); sys.stderr.flush(); sys.exit(3)
`, "exited", ""},
		{"garbage line", `    print("this is not json", flush=True)
`, "", "not a JSON reply"},
		{"backend error reply", `    print(json.dumps({"id": req["id"], "error": "bad request"}), flush=True)
`, "", "bad request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(script(t, tt.body), os.Environ(), ".", &bytes.Buffer{})
			defer b.Close()
			res, err := b.Run(context.Background(), backend.RunRequest{Workload: "ttt", Config: cfg})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v (result %+v)", tt.wantErr, err, res)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if res.Status != result.StatusFailed || !strings.Contains(res.Message, tt.wantMsg) {
				t.Fatalf("want failed result mentioning %q, got %s: %s", tt.wantMsg, res.Status, res.Message)
			}
			if tt.name == "crash keeps the last output" && !strings.Contains(res.Tail, "Traceback: boom") {
				t.Errorf("tail %q lacks the backend's last output", res.Tail)
			}
		})
	}
}

func TestContextCancelKillsHungBackend(t *testing.T) {
	b := New(script(t, "    import time; time.sleep(60)\n"), os.Environ(), ".", &bytes.Buffer{})
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := b.Run(ctx, backend.RunRequest{Workload: "ttt", Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("want deadline error, got %v", err)
	}
	// The next call starts a fresh process.
	if _, err := b.Info(context.Background()); err != nil {
		t.Fatalf("backend did not restart: %v", err)
	}
}

// A reply over the cap is refused with its size, and the backend is
// stopped (its stream cannot be trusted); nothing of it is kept.
func TestReplyOverTheCapIsRefused(t *testing.T) {
	t.Setenv(MaxReplyEnv, "100000")
	argv := script(t, `    sys.stdout.write('{"id": %d, "result": {"pad": "%s"}}\n' % (req["id"], "x" * 300000)); sys.stdout.flush()
`)
	b := New(argv, os.Environ(), "", &bytes.Buffer{})
	defer b.Close()
	_, err := b.Run(context.Background(), backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg})
	var big *ReplyTooLarge
	if !errors.As(err, &big) || big.Limit != 100000 || !strings.Contains(err.Error(), "larger than 100000 bytes") {
		t.Fatalf("want ReplyTooLarge at 100000, got %v", err)
	}
}

func TestReadLineLimit(t *testing.T) {
	tests := []struct {
		in      string
		limit   int
		want    string
		tooLong bool
	}{
		{"short\nrest", 100, "short\n", false},
		{strings.Repeat("a", 5000) + "\n", 6000, strings.Repeat("a", 5000) + "\n", false}, // longer than the reader's buffer
		{strings.Repeat("a", 5000) + "\n", 4000, "", true},
	}
	for _, tt := range tests {
		got, err := readLine(bufio.NewReaderSize(strings.NewReader(tt.in), 16), tt.limit)
		var big *ReplyTooLarge
		if errors.As(err, &big) != tt.tooLong || (!tt.tooLong && string(got) != tt.want) {
			t.Errorf("readLine(%d bytes, limit %d) = %d bytes, %v", len(tt.in), tt.limit, len(got), err)
		}
	}
}

// RunRaw hands back the program's result bytes exactly as written, so the
// plugin layer can pass them through and the host validate them once.
func TestRunRawPassesBytesThrough(t *testing.T) {
	argv := script(t, `    sys.stdout.write('{"id": %d, "result": {"backend":  "t", "odd_spacing": 1.50}}\n' % req["id"]); sys.stdout.flush()
`)
	b := New(argv, os.Environ(), "", &bytes.Buffer{})
	defer b.Close()
	raw, err := b.RunRaw(context.Background(), backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"backend":  "t", "odd_spacing": 1.50}`; string(raw) != want {
		t.Fatalf("RunRaw = %s, want %s", raw, want)
	}
}

// A backend that dies with a Python traceback shows the exception line in
// the result's message, not only "exited: EOF; exit status 1".
func TestCrashMessageCarriesTheExceptionLine(t *testing.T) {
	argv := script(t, `    sys.stderr.write('Traceback (most recent call last):\n  File "x.py", line 1\nValueError: shapes do not match\n'); sys.stderr.flush()
    sys.exit(1)
`)
	b := New(argv, os.Environ(), "", &bytes.Buffer{})
	defer b.Close()
	r, err := b.Run(context.Background(), backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != result.StatusFailed || !strings.Contains(r.Message, "ValueError: shapes do not match") {
		t.Fatalf("status %s, message %q: want failed naming the exception", r.Status, r.Message)
	}
}

// RunBatch: a result per request in order (one that breaks the schema is
// that request's failed result); a process that dies mid-batch is an error
// for the whole batch, never a failure pinned on every request; a program
// without the op is backend.ErrCannotBatch.
func TestRunBatch(t *testing.T) {
	ok := `{"samples_ms": [1.0], "backend": "t", "status": "ok", "config": r["config"], "device": {"kind": "cpu", "name": "c", "count": 1}, "compile_ms": 0, "peak_memory_bytes": 0, "num_params": 0, "throughput": 0, "env": {"framework": "none", "timing": "host-clock"}, "run_id": "", "schema_version": 2}`
	tests := []struct {
		name, body string
		want       []result.Status // nil: an error
		wantErr    string
	}{
		{"results in order", `    out = [` + ok + ` for r in req["requests"]]
    out[1]["status"] = "splendid"
    print(json.dumps({"id": req["id"], "results": out}), flush=True)
`, []result.Status{result.StatusOK, result.StatusFailed, result.StatusOK}, ""},
		{"crash mid-batch", `    sys.stderr.write("dying\n"); sys.exit(3)
`, nil, "exit status 3"},
		{"no such op", `    print(json.dumps({"id": req["id"], "error": "unknown op 'run_batch'"}), flush=True)
`, nil, "cannot run a batch"},
	}
	reqs := []backend.RunRequest{{Workload: "ttt", Device: "cpu", Config: cfg}, {Workload: "ttt", Device: "cpu", Config: cfg}, {Workload: "ttt", Device: "cpu", Config: cfg}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(script(t, tt.body), os.Environ(), ".", &bytes.Buffer{})
			defer b.Close()
			rs, err := b.RunBatch(context.Background(), reqs)
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || rs != nil {
					t.Fatalf("got %d results, %v; want no results and an error containing %q", len(rs), err, tt.wantErr)
				}
				if (tt.name == "no such op") != errors.Is(err, backend.ErrCannotBatch) {
					t.Errorf("ErrCannotBatch is %v for %v", errors.Is(err, backend.ErrCannotBatch), err)
				}
				return
			}
			if err != nil || len(rs) != len(tt.want) {
				t.Fatalf("%d results, %v", len(rs), err)
			}
			for i, r := range rs {
				if r.Status != tt.want[i] {
					t.Errorf("result %d: %s (%s), want %s", i, r.Status, r.Message, tt.want[i])
				}
			}
		})
	}
}
