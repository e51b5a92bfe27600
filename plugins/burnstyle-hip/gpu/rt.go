package gpu

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cupti"
)

// Runtime is one opened vendor runtime: the shared driver and compiler tables plus
// the few calls whose shapes differ per vendor. Every method must run on the
// device's worker thread.
type Runtime struct {
	Kind string // "cuda" or "rocm"
	Drv  drvAPI
	rtc  rtcAPI

	errName    func(code int32) string
	SetDynSmem func(fn uintptr, bytes int) error // nil where no opt-in is needed
	FuncAttrs  func(fn uintptr) (regs, localBytes int)
	release    func()

	ArchOpts   []string // compiler options naming the target
	Name       string
	driver     string
	Count      int
	MaxDynSmem int // bytes of shared memory one block may use
	SMCount    int
	BLAS       *cublas // nil: the portable GEMM kernels do the dense work
	BLASErr    error   // why blas is nil
	// launchEx is cuLaunchKernelEx, set on CUDA devices of compute
	// capability 9.0 or newer whose driver has it: thread-block clusters.
	launchEx func(cfg *cuLaunchConfig, f uintptr, params, extra unsafe.Pointer) int32
	// tmapEncode is cuTensorMapEncodeTiled (tmap.go), set on CUDA devices
	// of compute capability 9.0 or newer whose driver has it.
	tmapEncode tmapEncodeFn
	// stream is where launches and event records go: 0, the default
	// stream, except while a chunked forward enqueues a lane's work or a
	// forward is captured (graph.go).
	Stream uintptr
	// hold is the CUDA driver's stream wait on host memory (hold.go), nil
	// where there is none; LastHeld says whether TimedLaunches' samples ran
	// behind a hold.
	hold     *holdAPI
	LastHeld bool
	// Tracer reads the kernels' own timestamps (trace.go), nil where CUPTI
	// is absent (why in TracerWhy); LastTraced says whether TimedLaunches'
	// samples are record spans.
	Tracer     *cupti.Tracer
	TracerWhy  string
	LastTraced bool
	// LastRecords are the records of the last sample spanOf took (a
	// timeline of one call: gpucheck -steptrace).
	LastRecords []cupti.Record
	Graph       *graphAPI // nil: no stream capture, forwards are launched eagerly
}

// cuLaunchConfig and cuLaunchAttr are cuda.h's CUlaunchConfig and
// CUlaunchAttribute (value: a 64-byte union; cluster dims are its first
// three uint32).
type cuLaunchAttr struct {
	id  uint32
	_   uint32
	val [16]uint32
}

type cuLaunchConfig struct {
	gx, gy, gz, bx, by, bz, smem uint32
	_                            uint32
	stream                       uintptr
	attrs                        *cuLaunchAttr
	nattrs                       uint32
	_                            uint32
}

const cuLaunchAttrClusterDim = 4

// clusters says whether thread-block clusters can be launched.
func (r *Runtime) Clusters() bool { return r.launchEx != nil }

func (r *Runtime) Check(op string, code int32) error {
	if code == 0 {
		return nil
	}
	return fmt.Errorf("%s %s: %s (%d)", r.Kind, op, r.errName(code), code)
}

// Ptr is a device address. Kernel arguments use it, i32 and i64 so that a
// C int is never passed as 8 bytes by accident.
type Ptr uint64
type I32 int32
type I64 int64

func (r *Runtime) Alloc(bytes int64) (Ptr, error) {
	var p uint64
	if err := r.Check(fmt.Sprintf("alloc %d bytes", bytes), r.Drv.memAlloc(&p, uint64(bytes))); err != nil {
		return 0, err
	}
	return Ptr(p), nil
}

func (r *Runtime) Free(p Ptr) error { return r.Check("free", r.Drv.memFree(uint64(p))) }

func (r *Runtime) HtoD(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	err := r.Check(fmt.Sprintf("copy %d bytes to device", len(src)),
		r.Drv.htod(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src))))
	runtime.KeepAlive(src)
	return err
}

func (r *Runtime) DtoH(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	err := r.Check(fmt.Sprintf("copy %d bytes from device", len(dst)),
		r.Drv.dtoh(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst))))
	runtime.KeepAlive(dst)
	return err
}

// fill32 sets n 32-bit words, used to poison outputs (NaN) before checks.
func (r *Runtime) Fill32(p Ptr, v uint32, n int64) error {
	return r.Check("memset", r.Drv.memsetD32(uint64(p), v, uint64(n)))
}

// module compiles and loads src, returning the module and the compile log.
// A "--gpu-architecture=" option among defines replaces the device's (a
// kernel for sm_90a, whose wgmma plain sm_90 rejects).
func (r *Runtime) Module(src string, defines []string) (uintptr, string, error) {
	opts := archOpts(r.ArchOpts, defines)
	image, log, err := r.rtc.build(r.Kind, src, opts)
	if err != nil {
		return 0, log, err
	}
	var m uintptr
	err = r.Check("load module", r.Drv.moduleLoad(&m, unsafe.Pointer(&image[0])))
	runtime.KeepAlive(image)
	return m, log, err
}

func (r *Runtime) Function(mod uintptr, name string) (uintptr, error) {
	var f uintptr
	return f, r.Check("get function "+name, r.Drv.moduleFunc(&f, mod, cString(name)))
}

// launch starts fn on the current stream (r.stream). Each argument gets its own 8-byte
// slot; the kernel reads as many bytes as its parameter's C type has.
func (r *Runtime) Launch(name string, fn uintptr, grid, block [3]int, smem int, args ...any) error {
	return r.LaunchCluster(name, fn, grid, block, smem, 1, args...)
}

// LaunchCluster is launch with clusters of cs blocks along x (cs > 1 needs
// clusters()).
func (r *Runtime) LaunchCluster(name string, fn uintptr, grid, block [3]int, smem, cs int, args ...any) error {
	vals := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case Ptr:
			vals[i] = uint64(v)
		case I32:
			vals[i] = uint64(uint32(v))
		case I64:
			vals[i] = uint64(v)
		case float32:
			vals[i] = uint64(math.Float32bits(v))
		case *TensorMap: // a struct parameter: the driver copies its 128 bytes from here
			ptrs[i] = unsafe.Pointer(&v.opaque[0])
			continue
		default:
			return fmt.Errorf("launch %s: argument %d has type %T; use devPtr, i32, i64, float32 or *TensorMap", name, i, a)
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	var pp unsafe.Pointer
	if len(ptrs) > 0 {
		pp = unsafe.Pointer(&ptrs[0])
	}
	var code int32
	if cs > 1 {
		if r.launchEx == nil {
			return fmt.Errorf("launch %s: clusters of %d blocks need cuLaunchKernelEx on sm_90 or newer", name, cs)
		}
		attr := cuLaunchAttr{id: cuLaunchAttrClusterDim}
		attr.val[0], attr.val[1], attr.val[2] = uint32(cs), 1, 1
		cfg := cuLaunchConfig{gx: uint32(grid[0]), gy: uint32(grid[1]), gz: uint32(grid[2]),
			bx: uint32(block[0]), by: uint32(block[1]), bz: uint32(block[2]), smem: uint32(smem),
			stream: r.Stream, attrs: &attr, nattrs: 1}
		code = r.launchEx(&cfg, fn, pp, nil)
		runtime.KeepAlive(&attr)
		runtime.KeepAlive(&cfg)
	} else {
		code = r.Drv.launch(fn, uint32(grid[0]), uint32(grid[1]), uint32(grid[2]),
			uint32(block[0]), uint32(block[1]), uint32(block[2]), uint32(smem), r.Stream, pp, nil)
	}
	runtime.KeepAlive(vals)
	runtime.KeepAlive(ptrs)
	runtime.KeepAlive(args)
	if code != 0 {
		return r.Check(fmt.Sprintf("launch %s grid %v block %v smem %d cluster %d", name, grid, block, smem, cs), code)
	}
	return nil
}

func (r *Runtime) NewEvent() (uintptr, error) {
	var e uintptr
	return e, r.Check("event create", r.Drv.eventCreate(&e, 0))
}

func (r *Runtime) Record(e uintptr) error {
	return r.Check("event record", r.Drv.EventRecord(e, r.Stream))
}

// NewSyncEvent is an event used only for ordering between streams; with
// timing off it is cheaper to record and to wait on.
func (r *Runtime) NewSyncEvent() (uintptr, error) {
	var e uintptr
	return e, r.Check("event create", r.Drv.eventCreate(&e, eventDisableTiming))
}

// eventDisableTiming is CU_EVENT_DISABLE_TIMING and hipEventDisableTiming.
const eventDisableTiming = 2

// WaitEvent makes later work on the current stream wait for e.
func (r *Runtime) WaitEvent(e uintptr) error {
	return r.Check("stream wait event", r.Drv.streamWait(r.Stream, e, 0))
}

// NewStream creates a stream that synchronises with the default stream (so
// nothing outside a chunked forward can overtake it) at a priority from 0,
// the highest the device has, down; rank past the device's range clamps to
// its lowest.
func (r *Runtime) NewStream(rank int) (uintptr, error) {
	var least, greatest int32
	if err := r.Check("stream priority range", r.Drv.priorities(&least, &greatest)); err != nil {
		return 0, err
	}
	prio := greatest + int32(rank) // greater priority is a smaller number
	if prio > least {
		prio = least
	}
	var s uintptr
	return s, r.Check(fmt.Sprintf("create stream (priority %d)", prio), r.Drv.StreamCreate(&s, 0, prio))
}

// ElapsedMs waits for b and returns the device time from a to b.
func (r *Runtime) ElapsedMs(a, b uintptr) (float64, error) {
	if err := r.Check("event synchronize", r.Drv.eventSync(b)); err != nil {
		return 0, err
	}
	var ms float32
	err := r.Check("event elapsed", r.Drv.eventElapsed(&ms, a, b))
	return float64(ms), err
}

func (r *Runtime) Sync() error { return r.Check("synchronize", r.Drv.sync()) }

// sm is the compute capability the programs are built for (90 for
// sm_90), from the compiler's target option; 0 where none is named (HIP).
func (r *Runtime) SM() int {
	for _, o := range r.ArchOpts {
		var v int
		if _, err := fmt.Sscanf(o, "--gpu-architecture=sm_%d", &v); err == nil {
			return v
		}
	}
	return 0
}

// Off is p advanced by elems elements of esz bytes.
func (p Ptr) Off(elems int, esz int64) Ptr { return p + Ptr(int64(elems)*esz) }

// archOpts is base with its target option replaced by one that defines
// names, then defines.
func archOpts(base, defines []string) []string {
	const arch = "--gpu-architecture="
	override := false
	for _, d := range defines {
		override = override || strings.HasPrefix(d, arch)
	}
	var opts []string
	for _, o := range base {
		if !override || !strings.HasPrefix(o, arch) {
			opts = append(opts, o)
		}
	}
	return append(opts, defines...)
}
