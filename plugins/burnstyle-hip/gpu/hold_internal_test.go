package gpu

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// fakeHold is a driver whose stream wait and events are logged, with host
// memory from Go: what the hold does in which order, without a GPU. That
// the device really starts the events behind the wait is shown on the GPU by
// scripts/h100-clock.sh, not here.
type fakeHold struct {
	word    uint32
	log     []string
	refuse  bool
	blockMs int // the launch waits this long for the word (a launch that waits on the device)
}

func (f *fakeHold) rt() *Runtime {
	r := &Runtime{Kind: "cuda", errName: func(int32) string { return "err" }}
	r.Drv.EventRecord = func(e, s uintptr) int32 { f.log = append(f.log, "record"); return 0 }
	r.hold = &holdAPI{
		hostAlloc:  func(p *unsafe.Pointer, size uint64, flags uint32) int32 { *p = unsafe.Pointer(&f.word); return 0 },
		devPointer: func(d *uint64, p unsafe.Pointer, flags uint32) int32 { *d = uint64(uintptr(p)); return 0 },
		hostFree:   func(p unsafe.Pointer) int32 { f.log = append(f.log, "free"); return 0 },
		waitValue: func(s uintptr, addr uint64, v, flags uint32) int32 {
			if f.refuse {
				return 1
			}
			f.log = append(f.log, "wait")
			return 0
		},
	}
	return r
}

func (f *fakeHold) launch() error {
	seen := atomic.LoadUint32(&f.word)
	f.log = append(f.log, "launch")
	if seen != 0 {
		return errors.New("the stream was released before the launch")
	}
	deadline := time.Now().Add(time.Duration(f.blockMs) * time.Millisecond)
	for f.blockMs > 0 && atomic.LoadUint32(&f.word) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return nil
}

func TestHeldLaunchQueuesEverythingBehindTheWait(t *testing.T) {
	f := &fakeHold{}
	r := f.rt()
	h := r.newHold()
	if h == nil {
		t.Fatal("no hold with every function bound")
	}
	ok, err := h.heldLaunch(r, 1, 2, f.launch)
	if err != nil || !ok {
		t.Fatalf("heldLaunch: ok %v err %v", ok, err)
	}
	if got := strings.Join(f.log, ","); got != "wait,record,launch,record" {
		t.Errorf("order %s, want the wait first, then both events around the launch", got)
	}
	if atomic.LoadUint32(&f.word) != 1 {
		t.Errorf("word %d after the call: the stream was not released", f.word)
	}
	h.free()
}

func TestHoldFallsBack(t *testing.T) {
	// A driver that refuses the wait: no events, the caller times without a hold.
	f := &fakeHold{refuse: true}
	r := f.rt()
	if ok, err := r.newHold().heldLaunch(r, 1, 2, f.launch); ok || err != nil || len(f.log) != 0 {
		t.Errorf("refused wait: ok %v err %v log %v", ok, err, f.log)
	}
	// A launch that waits on the device: the watchdog releases the stream and the sample is refused.
	old := holdLimit
	holdLimit = 20 * time.Millisecond
	defer func() { holdLimit = old }()
	f = &fakeHold{blockMs: 2000}
	r = f.rt()
	start := time.Now()
	if ok, err := r.newHold().heldLaunch(r, 1, 2, f.launch); ok || err != nil {
		t.Errorf("blocking launch: ok %v err %v, want a refused sample", ok, err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("the watchdog did not release the stream (%v)", time.Since(start))
	}
	// Turned off, or no driver support: no hold.
	t.Setenv("XBENCH_BURNSTYLE_HOLD", "0")
	if (&fakeHold{}).rt().newHold() != nil || (&Runtime{}).newHold() != nil {
		t.Error("a hold where it is off or unbound")
	}
	if !strings.Contains(ClockWord(true, false, ""), "not in the sample") || !strings.Contains(ClockWord(false, false, ""), "launch in the sample") {
		t.Error("clockWord does not say whether the launch is in the sample")
	}
	// Record spans: the Python backends' name for the clock, the library, and the hold.
	if w := ClockWord(true, true, "/x/libcupti.so.13"); !strings.HasPrefix(w, "cupti-kernel-span: ") ||
		!strings.Contains(w, "/x/libcupti.so.13") || !strings.Contains(w, "held") {
		t.Errorf("ClockWord(traced) = %q", w)
	}
}
