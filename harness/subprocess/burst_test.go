package subprocess

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
)

// A program whose burst sleeps for its calls (5 ms each) and reports no
// time at all: the wall time is the one this side measured, so it is at
// least the sleep (a lower bound a sleep guarantees, not a timing).
func TestBurstTimesTheBurstAlone(t *testing.T) {
	argv := script(t, `    if req["op"] == "burst_prepare":
        print(json.dumps({"id": req["id"], "burst": {"status": "ok"}}), flush=True)
    elif req["op"] == "burst":
        import time; n = req["request"]["calls"]; time.sleep(0.005 * n)
        print(json.dumps({"id": req["id"], "burst": {"status": "ok", "calls": n}}), flush=True)
`)
	b := New(argv, os.Environ(), ".", &bytes.Buffer{})
	defer b.Close()
	rep, err := b.Burst(context.Background(), backend.BurstRequest{Calls: 20, Run: backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != result.StatusOK || rep.Calls != 20 || rep.WallMs < 100 {
		t.Fatalf("report %+v: want ok, 20 calls, and at least the 100 ms the burst slept", rep)
	}
}

// A burst past its limit is ended and reported unfinished, with the time
// it ran as a lower bound; the program is killed, not waited for.
func TestBurstPastItsLimit(t *testing.T) {
	argv := script(t, `    if req["op"] == "burst_prepare":
        print(json.dumps({"id": req["id"], "burst": {"status": "ok"}}), flush=True)
    elif req["op"] == "burst":
        import time; time.sleep(600)
`)
	b := New(argv, os.Environ(), ".", &bytes.Buffer{})
	defer b.Close()
	rep, err := b.Burst(context.Background(), backend.BurstRequest{Calls: 1000, Limit: 200 * time.Millisecond,
		Run: backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != result.StatusOK || !rep.Unfinished || rep.Calls != 1000 || rep.WallMs < 200 {
		t.Fatalf("report %+v: want ok, unfinished, 1000 calls, at least the 200 ms limit", rep)
	}
}

// Rounds after the first are sent on the same prepared step, and a round
// ended at its limit after one that finished leaves the finished one
// standing: a stall (or a load spike) late in the check cannot turn a
// measured burst into an unfinished one.
func TestBurstRoundsKeepTheFinishedOne(t *testing.T) {
	argv := script(t, `    if req["op"] == "burst_prepare":
        rounds = 0
        print(json.dumps({"id": req["id"], "burst": {"status": "ok"}}), flush=True)
    elif req["op"] == "burst":
        rounds += 1
        if rounds == 2:
            import time; time.sleep(600)
        print(json.dumps({"id": req["id"], "burst": {"status": "ok", "calls": req["request"]["calls"]}}), flush=True)
`)
	b := New(argv, os.Environ(), ".", &bytes.Buffer{})
	defer b.Close()
	rep, err := b.Burst(context.Background(), backend.BurstRequest{Calls: 4, Rounds: 3, Limit: 200 * time.Millisecond,
		Run: backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != result.StatusOK || rep.Unfinished || rep.Calls != 4 || !(rep.WallMs > 0) {
		t.Fatalf("report %+v: want the first round's, ok and finished", rep)
	}
}

func TestBurstReplies(t *testing.T) {
	tests := []struct {
		name, body string
		wantStatus result.Status
		wantErr    string
	}{
		{"prepare refused", `    print(json.dumps({"id": req["id"], "burst": {"status": "failed", "message": "incorrect: max abs err 3"}}), flush=True)
`, result.StatusFailed, ""},
		{"unknown op", `    print(json.dumps({"id": req["id"], "error": "unknown op 'burst_prepare'"}), flush=True)
`, "", "cannot burst"},
		{"crash", `    sys.exit(3)
`, result.StatusFailed, ""},
		{"wrong count", `    print(json.dumps({"id": req["id"], "burst": {"status": "ok", "calls": 1}}), flush=True)
`, "", "asked for 7 calls, the backend says it made 1"},
		{"no burst object", `    print(json.dumps({"id": req["id"]}), flush=True)
`, "", "reply has no burst object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(script(t, tt.body), os.Environ(), ".", &bytes.Buffer{})
			defer b.Close()
			rep, err := b.Burst(context.Background(), backend.BurstRequest{Calls: 7, Run: backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if tt.wantErr == "cannot burst" && !errors.Is(err, backend.ErrCannotBurst) {
					t.Fatalf("error %v is not ErrCannotBurst", err)
				}
				return
			}
			if err != nil || rep.Status != tt.wantStatus || rep.Message == "" {
				t.Fatalf("report %+v, %v; want status %s with a message", rep, err, tt.wantStatus)
			}
		})
	}
}
