package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(small, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		limit int64
		want  string // the content, or a part of the error
		ok    bool
	}{
		{"small.json", 10, "0123456789", true},
		{"link.json", 10, "0123456789", true}, // a link to a regular file is that file
		{"small.json", 9, "is 10 bytes, above the 9", false},
		{"fifo.json", 10, "is not a regular file (a FIFO)", false},
		{"zero.json", 10, "is not a regular file (a character device)", false},
		{"sub.json", 10, "is not a regular file (a folder)", false},
		{"missing.json", 10, "no such file", false},
	}
	for _, tt := range tests {
		raw, err := ReadRegular(filepath.Join(dir, tt.name), tt.limit)
		if tt.ok && (err != nil || string(raw) != tt.want) {
			t.Errorf("%s: %q, %v; want %q", tt.name, raw, err, tt.want)
		}
		if !tt.ok && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s (limit %d): error %v, want one saying %q", tt.name, tt.limit, err, tt.want)
		}
	}
}
