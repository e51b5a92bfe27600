package sweep

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// lockHelperEnv turns the re-executed test binary into a lock holder:
// a real second process, since only its death shows the kernel drops the lock.
const lockHelperEnv = "XBENCH_LOCK_HELPER_DIR"

// TestLockHolderProcess is not a test on its own: run by
// TestLockDroppedWhenHolderDies as a child, it takes the whole-sweep lock,
// says so and sleeps until killed.
func TestLockHolderProcess(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("only a child of TestLockDroppedWhenHolderDies runs this")
	}
	if _, err := LockFolder(dir, 0, 1); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Hour)
}

// TestLockDroppedWhenHolderDies: a holder killed with SIGKILL never runs
// Release, yet the next sweep gets the folder at once, because the kernel
// drops an flock with its last descriptor. While the holder lives, the busy
// message names its pid.
func TestLockDroppedWhenHolderDies(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("holder said %q, want locked", line)
	}
	var busy *BusyError
	_, err = LockFolder(dir, 0, 1)
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d ", cmd.Process.Pid)) {
		t.Fatalf("while the holder lives: %v, want a BusyError naming pid %d", err, cmd.Process.Pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	l, err := LockFolder(dir, 0, 1)
	if err != nil {
		t.Fatalf("after the holder was killed: %v, want the lock", err)
	}
	l.Release()
}
