package gpu_test

import (
	"os"
	"sync"
	"testing"
)

// The emulator's kernel cache (XBEMU_CACHE, emu/xbemu_rtc.cpp): one folder
// per test binary, so each program the tests build is compiled by g++ once
// however many tests and models use it, and removed when the tests end.
var (
	emuCacheOnce sync.Once
	emuCacheDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if emuCacheDir != "" {
		os.RemoveAll(emuCacheDir)
	}
	os.Exit(code)
}

// useEmuCache points the emulator's fake NVRTC at this test binary's cache;
// without a folder (MkdirTemp failed) every compile runs g++, as before.
func useEmuCache(t *testing.T) {
	emuCacheOnce.Do(func() {
		if dir, err := os.MkdirTemp("", "xbench-xbemu-kernels-*"); err == nil {
			emuCacheDir = dir
		}
	})
	if emuCacheDir != "" {
		t.Setenv("XBEMU_CACHE", emuCacheDir)
	}
}
