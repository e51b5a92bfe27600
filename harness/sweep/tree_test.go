package sweep_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/runner"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// faultSession is a session on the fault backend, its plugin processes being
// the real xbench binary. The root holds no backends of its own.
func faultSession(t *testing.T) *bench.Session {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(registry.Options{Root: root, ExtraDirs: []string{faultDir}, Env: runner.ModeVenv, Self: xbench(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := bench.NewSession(reg, "tree-test", bench.Meta{}, nil)
	t.Cleanup(sess.Close)
	return sess
}

var hangCfg = ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 16,
	MiniBatch: 16, Dtype: "bfloat16", Backbone: "transformer", Repeats: 1}.Result()

// The hang fault leaves a Python process and a child it spawned; whatever
// way the harness gives up on the backend, neither may survive. The start
// is bounded on its own (a loaded machine may take seconds to start
// Python), so the cell's timeout measures the hang alone. Should even that
// expire before the hang wrote its pids (no process to check yet), the
// run is repeated with twice the timeout: every attempt must end in a
// timeout, and the one that saw the tree must see it die.
func TestTimeoutKillsTheBackendTree(t *testing.T) {
	for timeout := time.Second; ; timeout *= 2 {
		pidFile := filepath.Join(t.TempDir(), "pids")
		t.Setenv("XBENCH_FAULT_PIDS", pidFile)
		sess := faultSession(t)
		sess.StartTimeout = 5 * time.Minute
		r := sess.Run(context.Background(), "faulty", "cpu", hangCfg, timeout)
		if r.Status != result.StatusTimeout || strings.Contains(r.Message, "did not start") {
			t.Fatalf("hang with --timeout %s: status %s (%s), want the run's timeout", timeout, r.Status, r.Message)
		}
		if raw, _ := os.ReadFile(pidFile); len(strings.Fields(string(raw))) == 2 || timeout >= 16*time.Second {
			waitDead(t, readPids(t, pidFile))
			return
		}
		t.Logf("the %s timeout expired before the hang wrote its pids; again with twice that", timeout)
	}
}

func TestRestartOfABusyBackendKillsItsTree(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	t.Setenv("XBENCH_FAULT_PIDS", pidFile)
	sess := faultSession(t)
	done := make(chan result.Result, 1)
	go func() { done <- sess.Run(context.Background(), "faulty", "cpu", hangCfg, time.Hour) }()
	for {
		raw, _ := os.ReadFile(pidFile)
		if len(strings.Fields(string(raw))) == 2 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("hang returned %s (%s) before it hung", r.Status, r.Message)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// What the sweep does after a failed cell, and Close at its end: the
	// plugin process goes, and with it the hung program and its child.
	sess.Restart("faulty")
	waitDead(t, readPids(t, pidFile))
	if r := <-done; r.Status != result.StatusFailed {
		t.Errorf("the interrupted run: status %s, want failed", r.Status)
	}
}
