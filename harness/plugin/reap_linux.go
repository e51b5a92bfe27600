package plugin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A backend may start a child in a new session (setsid), which leaves the
// plugin's process group, so killing the group does not reach it. xbench
// therefore makes itself a child subreaper: such orphans are re-parented to
// xbench instead of init, and ReapOrphans kills every child of xbench that
// is not a plugin process it launched.

var (
	launchedMu sync.Mutex
	launched   = map[int]bool{} // every plugin pid, live or not: never ours to reap
)

// EnableSubreaper makes this process the reaper of its descendants'
// orphans (Linux PR_SET_CHILD_SUBREAPER).
func EnableSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

func remember(pid int) {
	launchedMu.Lock()
	launched[pid] = true
	launchedMu.Unlock()
}

// ReapOrphans kills (with their process groups) and collects every child of
// this process that runs in a session of its own: descendants of a closed
// backend that escaped its process group with setsid. Plugins and the
// commands xbench runs itself stay in xbench's session, so a plugin that
// another worker is starting right now is never touched.
func ReapOrphans() int {
	self := os.Getpid()
	mySID, err := unix.Getsid(0)
	if err != nil {
		return 0
	}
	n := 0
	// Orphans are re-parented when their parent dies, which the group kill
	// has just caused: give the kernel a moment.
	for try := 0; try < 3; try++ {
		for _, c := range childrenOf(self) {
			launchedMu.Lock()
			ours := launched[c.pid]
			launchedMu.Unlock()
			if ours || c.sid == mySID {
				continue
			}
			pid := c.pid
			_ = syscall.Kill(-pid, syscall.SIGKILL) // its group, if it leads one
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
			n++
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

type proc struct{ pid, sid int }

// childrenOf lists the processes whose parent is ppid, from /proc.
func childrenOf(ppid int) []proc {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []proc
	for _, p := range stats {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(raw)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:]) // state ppid pgrp session ...
		if len(fields) < 4 {
			continue
		}
		pp, err1 := strconv.Atoi(fields[1])
		sid, err2 := strconv.Atoi(fields[3])
		pid, err3 := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err1 == nil && err2 == nil && err3 == nil && pp == ppid {
			out = append(out, proc{pid, sid})
		}
	}
	return out
}
