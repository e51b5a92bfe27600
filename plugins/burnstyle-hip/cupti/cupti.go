// Package cupti reads the GPU's own start and end timestamps of the kernels,
// copies and memsets this process launches, through CUPTI's activity API
// (libcupti, loaded at run time: no cgo, nothing needed at build time).
//
// Why: a sample is the device time of a call's work (docs/protocol.md, "What
// one sample is"). CUDA events around a call add the events' own cost, a
// large share of a short call's time (results/h100-clock/README.md). The
// activity records carry the kernels' own timestamps, so the span from the
// first record's start to the last record's end has no clock in it; the
// Python backends read the same records (plugins/_python/xbench_devclock.py).
//
// CUPTI hands records over in buffers the process lends it: bufferRequested
// gives it one, bufferCompleted returns it full (on the thread that calls
// cuptiActivityFlushAll, or on a thread of CUPTI's own; purego's callbacks
// work on both). Drain forces the flush and returns the records since the
// last Drain.
package cupti

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The activity kinds a span is made of (CUpti_ActivityKind).
const (
	kindMemcpy           = 1
	kindMemset           = 2
	kindConcurrentKernel = 10

	flagFlushForced = 1 // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED

	resultSuccess         = 0
	resultMaxLimitReached = 12 // CUPTI_ERROR_MAX_LIMIT_REACHED: no more records in the buffer

	bufferBytes = 1 << 20 // one buffer lent to CUPTI; 8-byte aligned (mmap'd)
)

// Record is one kernel, copy or memset as the device ran it: its kind and
// start and end in nanoseconds on the GPU's timestamp clock; for a kernel
// also its stream, grid, block and dynamic shared memory, and its name
// (Name), which a timeline of a call (gpucheck -steptrace) shows.
type Record struct {
	Kind        uint32
	Start, End  uint64
	Stream      uint32
	Grid, Block [3]int32
	DynSmem     int32
	name        *byte // const char* owned by CUPTI, shared by the kernel's records
}

// Name is a kernel record's function name, "" for other kinds.
func (r Record) Name() string {
	if r.name == nil {
		return ""
	}
	return goString(r.name) // CUPTI keeps it for the process
}

// Span is the milliseconds from the first record's start to the last one's
// end: the call's device time. Zero records: 0.
func Span(records []Record) float64 {
	if len(records) == 0 {
		return 0
	}
	lo, hi := records[0].Start, records[0].End
	for _, r := range records[1:] {
		lo, hi = min(lo, r.Start), max(hi, r.End)
	}
	if hi < lo {
		return 0
	}
	return float64(hi-lo) / 1e6
}

// api is the part of libcupti the tracer calls.
type api struct {
	registerCallbacks func(requested, completed uintptr) int32
	enable            func(kind int32) int32
	disable           func(kind int32) int32
	flushAll          func(flag uint32) int32
	getNextRecord     func(buffer uintptr, validSize uint64, record *uintptr) int32
	resultString      func(result int32, str **byte) int32
}

// Tracer is the process's one CUPTI activity subscription (CUPTI allows one).
type Tracer struct {
	lib  api
	path string

	mu      sync.Mutex
	records []Record
	free    [][]byte           // buffers CUPTI gave back, to lend again
	lent    map[uintptr][]byte // buffers CUPTI holds, by address (keeps them alive)
	err     error              // the first record CUPTI could not hand over
	active  bool
}

var (
	openOnce   sync.Once
	openTracer *Tracer
	openErr    error
)

// Open binds the libcupti the caller loaded (lib, from path; the native
// backend finds it as it finds every vendor library: gpu/libs.go, specCUPTI)
// and registers the buffer callbacks; the first call decides for the
// process. Start enables the records.
func Open(lib uintptr, path string) (*Tracer, error) {
	openOnce.Do(func() { openTracer, openErr = open(lib, path) })
	return openTracer, openErr
}

func open(lib uintptr, where string) (*Tracer, error) {
	t := &Tracer{path: where, lent: map[uintptr][]byte{}}
	for name, fp := range map[string]any{
		"cuptiActivityRegisterCallbacks": &t.lib.registerCallbacks,
		"cuptiActivityEnable":            &t.lib.enable,
		"cuptiActivityDisable":           &t.lib.disable,
		"cuptiActivityFlushAll":          &t.lib.flushAll,
		"cuptiActivityGetNextRecord":     &t.lib.getNextRecord,
		"cuptiGetResultString":           &t.lib.resultString,
	} {
		sym, err := purego.Dlsym(lib, name)
		if err != nil {
			return nil, fmt.Errorf("cupti: %s has no %s: %w", where, name, err)
		}
		purego.RegisterFunc(fp, sym)
	}
	requested := purego.NewCallback(t.bufferRequested)
	completed := purego.NewCallback(t.bufferCompleted)
	if err := t.check("cuptiActivityRegisterCallbacks", t.lib.registerCallbacks(requested, completed)); err != nil {
		return nil, err
	}
	return t, nil
}

// Path is the libcupti the tracer loaded.
func (t *Tracer) Path() string { return t.path }

// Start enables kernel, copy and memset records. CUPTI must be started
// before the CUDA context it should see work in is used for that work.
func (t *Tracer) Start() error {
	t.mu.Lock()
	active := t.active
	t.mu.Unlock()
	if active {
		return nil
	}
	for _, k := range []int32{kindConcurrentKernel, kindMemcpy, kindMemset} {
		if err := t.check(fmt.Sprintf("cuptiActivityEnable(%d)", k), t.lib.enable(k)); err != nil {
			return err
		}
	}
	t.mu.Lock()
	t.active = true
	t.mu.Unlock()
	return nil
}

// Stop disables the records and drops what is pending.
func (t *Tracer) Stop() error {
	t.mu.Lock()
	active := t.active
	t.mu.Unlock()
	if !active {
		return nil
	}
	var first error
	for _, k := range []int32{kindConcurrentKernel, kindMemcpy, kindMemset} {
		if err := t.check(fmt.Sprintf("cuptiActivityDisable(%d)", k), t.lib.disable(k)); err != nil && first == nil {
			first = err
		}
	}
	_, err := t.Drain()
	t.mu.Lock()
	t.active = false
	t.mu.Unlock()
	return errors.Join(first, err)
}

// Drain hands over every record since the last Drain. Call it after the
// device finished the work (a synchronize): CUPTI flushes only completed
// records.
func (t *Tracer) Drain() ([]Record, error) {
	if err := t.check("cuptiActivityFlushAll", t.lib.flushAll(flagFlushForced)); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out, err := t.records, t.err
	t.records, t.err = nil, nil
	return out, err
}

// bufferRequested lends CUPTI an empty buffer: void (*)(uint8_t **buffer,
// size_t *size, size_t *maxNumRecords).
func (t *Tracer) bufferRequested(buffer, size, maxRecords *uintptr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b []byte
	if n := len(t.free); n > 0 {
		b, t.free = t.free[n-1], t.free[:n-1]
	} else {
		var err error
		if b, err = syscall.Mmap(-1, 0, bufferBytes, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANON); err != nil {
			if t.err == nil {
				t.err = fmt.Errorf("cupti: a %d-byte record buffer: %w", bufferBytes, err)
			}
			*buffer, *size, *maxRecords = 0, 0, 0 // CUPTI drops records it has no buffer for
			return
		}
	}
	addr := uintptr(unsafe.Pointer(&b[0]))
	t.lent[addr] = b
	*buffer, *size, *maxRecords = addr, uintptr(len(b)), 0
}

// bufferCompleted takes back a buffer with validSize bytes of records:
// void (*)(CUcontext, uint32_t streamId, uint8_t *buffer, size_t size,
// size_t validSize).
func (t *Tracer) bufferCompleted(_ uintptr, _ uint32, buffer uintptr, _ uintptr, validSize uintptr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.lent[buffer]
	if !ok {
		return // not one of ours: nothing to read or keep
	}
	delete(t.lent, buffer)
	var rec uintptr
	for {
		r := t.lib.getNextRecord(buffer, uint64(validSize), &rec)
		if r == resultMaxLimitReached {
			break
		}
		if r != resultSuccess {
			if t.err == nil {
				t.err = t.check("cuptiActivityGetNextRecord", r)
			}
			break
		}
		if got, ok := parse(b, rec-buffer); ok {
			t.records = append(t.records, got)
		}
	}
	t.free = append(t.free, b)
}

// parse reads one record at offset off of b. Kernel (CUpti_ActivityKernel4
// and later), memcpy and memset records all hold start and end as uint64 at
// bytes 16 and 24; other kinds are not asked for and are skipped. A kernel
// record (every version since 4 keeps this prefix) also holds its stream at
// 48, grid and block at 52..75, dynamic shared memory at 80 and its name's
// pointer at 104.
func parse(b []byte, off uintptr) (Record, bool) {
	if off+32 > uintptr(len(b)) {
		return Record{}, false
	}
	u32 := func(at uintptr) uint32 { return *(*uint32)(unsafe.Pointer(&b[off+at])) }
	kind := u32(0)
	switch kind {
	case kindConcurrentKernel, kindMemcpy, kindMemset:
	default:
		return Record{}, false
	}
	r := Record{Kind: kind, Start: *(*uint64)(unsafe.Pointer(&b[off+16])), End: *(*uint64)(unsafe.Pointer(&b[off+24]))}
	if kind == kindConcurrentKernel && off+112 <= uintptr(len(b)) {
		r.Stream, r.DynSmem = u32(48), int32(u32(80))
		for i := range 3 {
			r.Grid[i], r.Block[i] = int32(u32(52+4*uintptr(i))), int32(u32(64+4*uintptr(i)))
		}
		r.name = *(**byte)(unsafe.Pointer(&b[off+104]))
	}
	return r, true
}

func (t *Tracer) check(op string, r int32) error {
	if r == resultSuccess {
		return nil
	}
	var s *byte
	msg := ""
	if t.lib.resultString != nil && t.lib.resultString(r, &s) == resultSuccess && s != nil {
		msg = goString(s)
	}
	return fmt.Errorf("cupti: %s: error %d %s", op, r, msg)
}

func goString(p *byte) string {
	var n int
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
