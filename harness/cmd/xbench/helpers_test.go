package main

import (
	"strconv"
	"syscall"
)

func strconvQuote(s string) string { return strconv.Quote(s) }

// alive reports whether a process id still names a running process.
func alive(pid string) bool {
	n, err := strconv.Atoi(pid)
	if err != nil {
		return false
	}
	return syscall.Kill(n, 0) == nil
}
