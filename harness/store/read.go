package store

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxFileBytes caps what a reader of a results folder loads from one file:
// a result of a million samples is about 20 MB, so anything larger is not
// one (a link to /dev/zero named *.json, a runaway log) and is refused
// instead of filling memory.
const MaxFileBytes = 64 << 20

// ReadRegular reads path when it is (or links to) a regular file of at most
// limit bytes, and refuses anything else naming what it is: a FIFO (opened
// non-blocking, so a FIFO without a writer never hangs the reader), a
// device such as /dev/zero, a socket, a folder. The type and size are read
// from the opened file, so a file swapped after a check is still checked.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): only regular files are read", path, kindOf(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, above the %d a results file may have", path, st.Size(), limit)
	}
	// The file may grow after the stat: never read past the cap.
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%s grew above the %d bytes a results file may have while it was read", path, limit)
	}
	return raw, nil
}

func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	case m.IsRegular():
		return "a regular file"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}
