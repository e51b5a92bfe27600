package gpu

import (
	"os"
	"sync/atomic"
	"time"
	"unsafe"
)

// The protocol's sample is the device time of the call's work, without the
// host's launch of it (docs/protocol.md, "What one sample is"). An event
// recorded on an idle stream before the launch fires at once, so the sample
// would hold the launch (purego and cuBLAS dispatch, a few microseconds). A
// hold closes that gap: before the start event the stream waits on a word of
// host memory (cuStreamWaitValue32); the start event, the call and the end
// event are queued behind the wait; then the host writes the word and the
// device runs the three back to back, so the start event fires right before
// the first kernel. CUDA only (HIP's wait has another signature), optional
// (a driver without stream memory operations times without it), and
// XBENCH_BURNSTYLE_HOLD=0 turns it off.

// holdAPI is the part of the CUDA driver API a hold needs.
type holdAPI struct {
	hostAlloc  func(p *unsafe.Pointer, size uint64, flags uint32) int32
	devPointer func(d *uint64, p unsafe.Pointer, flags uint32) int32
	hostFree   func(p unsafe.Pointer) int32
	waitValue  func(stream uintptr, addr uint64, value uint32, flags uint32) int32
}

// holdLimit is how long a held stream waits for the host before a watchdog
// releases it: a launch that itself waits on the device (it never should)
// would otherwise never return.
var holdLimit = time.Second // a var for the tests

const (
	cuMemHostAllocDeviceMap = 0x02
	cuStreamWaitValueGEQ    = 0x0
)

// bindHold binds the hold's functions from the CUDA driver, or leaves
// r.hold nil when the driver lacks one.
func (r *Runtime) bindHold(lib uintptr, path string) {
	var h holdAPI
	if bind(lib, path, map[string]any{
		"cuMemHostAlloc": &h.hostAlloc, "cuMemHostGetDevicePointer_v2": &h.devPointer,
		"cuMemFreeHost": &h.hostFree, "cuStreamWaitValue32_v2|cuStreamWaitValue32": &h.waitValue,
	}) == nil {
		r.hold = &h
	}
}

// streamHold is one word of mapped host memory the stream waits on.
type streamHold struct {
	api  *holdAPI
	host unsafe.Pointer
	dev  uint64
	seq  uint32
}

// newHold is a hold for r's stream, or nil (no error) where holds are off or
// unavailable: the samples then hold the launch, and heldTiming says so.
func (r *Runtime) newHold() *streamHold {
	if r.hold == nil || os.Getenv("XBENCH_BURNSTYLE_HOLD") == "0" {
		return nil
	}
	h := &streamHold{api: r.hold}
	if r.hold.hostAlloc(&h.host, 4, cuMemHostAllocDeviceMap) != 0 {
		return nil
	}
	if r.hold.devPointer(&h.dev, h.host, 0) != 0 {
		r.hold.hostFree(h.host)
		return nil
	}
	atomic.StoreUint32((*uint32)(h.host), 0)
	return h
}

// wait queues the stream's wait for the next value; false when the driver
// refused it (no stream memory operations: the caller times without a hold).
func (h *streamHold) wait(stream uintptr) bool {
	h.seq++
	return h.api.waitValue(stream, h.dev, h.seq, cuStreamWaitValueGEQ) == 0
}

// release lets the stream run (idempotent for one seq).
func (h *streamHold) release() { atomic.StoreUint32((*uint32)(h.host), h.seq) }

func (h *streamHold) free() {
	if h != nil {
		h.api.hostFree(h.host)
	}
}

// heldLaunch runs launch between the events, behind the hold: ok false when
// the watchdog had to release the stream (the launch waited on the device),
// so the sample is not the call's device time.
func (h *streamHold) heldLaunch(r *Runtime, start, end uintptr, launch func() error) (ok bool, err error) {
	if !h.wait(r.Stream) {
		return false, nil
	}
	var fired atomic.Bool
	wd := time.AfterFunc(holdLimit, func() { fired.Store(true); h.release() })
	defer func() { wd.Stop(); h.release() }()
	if err := r.Record(start); err != nil {
		return false, err
	}
	if err := launch(); err != nil {
		return false, err
	}
	if err := r.Record(end); err != nil {
		return false, err
	}
	wd.Stop()
	h.release()
	return !fired.Load(), nil
}
