package gpu

// gfx942 (MI300) from the kernels' HIP source, with no GPU and no ROCm
// install: Debian 12's hipRTC (ROCm 5.2) crashes compiling for gfx942, and
// no registry here ships a newer HIP front end that loads on Debian 12. So
// the compile is split in two real compilers:
//
//  1. Debian 12's clang 16 compiles the HIP source to LLVM bitcode for
//     gfx940, the newest CDNA3 target it knows (gfx942 came in LLVM 17),
//     with Debian's ROCm device libraries (ocml, ockl) linked in;
//  2. ROCm 7.2.2's LLVM (librocmllvm.so from PyPI's rocm-llvm-python,
//     bound through purego) sets every function's target-cpu to gfx942 and
//     generates gfx942 code: an ELF relocatable object with the AMDGPU
//     metadata, read as hipRTC's code objects are (amdKernels).
//
// What this shows: the AMDGPU back end of a ROCm that supports gfx942
// compiles every kernel for it, and each kernel's registers, spills and
// scratch there. What it does not: the front end predefines __gfx940__, not
// __gfx942__ (the kernels test no arch macro), and the object is not linked
// into a loadable code object (no lld here).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// llvmC is the part of LLVM's C API the back-end step needs.
type llvmC struct {
	contextCreate func() uintptr
	bufferCopy    func(data unsafe.Pointer, n uint64, name *byte) uintptr
	parseBitcode  func(ctx, buf uintptr, mod *uintptr) int32
	firstFunc     func(mod uintptr) uintptr
	nextFunc      func(f uintptr) uintptr
	addFuncAttr   func(f uintptr, kind, value *byte)
	targetFor     func(triple *byte, t *uintptr, msg **byte) int32
	newTM         func(t uintptr, triple, cpu, features *byte, level, reloc, model int32) uintptr
	tmLayout      func(tm uintptr) uintptr
	setLayout     func(mod, layout uintptr)
	emit          func(tm, mod uintptr, kind int32, msg **byte, out *uintptr) int32
	bufStart      func(buf uintptr) unsafe.Pointer
	bufSize       func(buf uintptr) uint64
	disposeBuf    func(buf uintptr)
	disposeModule func(mod uintptr)
	disposeTM     func(tm uintptr)
	disposeCtx    func(ctx uintptr)
	initInfo      func()
	initTarget    func()
	initMC        func()
	initPrinter   func()
}

func (l *llvmC) table() map[string]any {
	return map[string]any{"LLVMContextCreate": &l.contextCreate, "LLVMCreateMemoryBufferWithMemoryRangeCopy": &l.bufferCopy,
		"LLVMParseBitcodeInContext2": &l.parseBitcode, "LLVMGetFirstFunction": &l.firstFunc, "LLVMGetNextFunction": &l.nextFunc,
		"LLVMAddTargetDependentFunctionAttr": &l.addFuncAttr, "LLVMGetTargetFromTriple": &l.targetFor,
		"LLVMCreateTargetMachine": &l.newTM, "LLVMCreateTargetDataLayout": &l.tmLayout, "LLVMSetModuleDataLayout": &l.setLayout,
		"LLVMTargetMachineEmitToMemoryBuffer": &l.emit, "LLVMGetBufferStart": &l.bufStart, "LLVMGetBufferSize": &l.bufSize,
		"LLVMDisposeMemoryBuffer": &l.disposeBuf, "LLVMDisposeModule": &l.disposeModule, "LLVMDisposeTargetMachine": &l.disposeTM,
		"LLVMContextDispose": &l.disposeCtx, "LLVMInitializeAMDGPUTargetInfo": &l.initInfo,
		"LLVMInitializeAMDGPUTarget": &l.initTarget, "LLVMInitializeAMDGPUTargetMC": &l.initMC,
		"LLVMInitializeAMDGPUAsmPrinter": &l.initPrinter}
}

var (
	rocmLLVMOnce sync.Once
	rocmLLVM     *llvmC
	rocmLLVMPath string
	rocmLLVMErr  error
	rocmLLVMMu   sync.Mutex // one code generation at a time: LLVM's globals are shared
)

// openROCmLLVM binds XBENCH_LIBROCMLLVM (test.sh: the rocm-llvm-python
// wheel's librocmllvm.so) once per process.
func openROCmLLVM() (*llvmC, string, error) {
	rocmLLVMOnce.Do(func() {
		path := os.Getenv("XBENCH_LIBROCMLLVM")
		if path == "" {
			rocmLLVMErr = fmt.Errorf("set XBENCH_LIBROCMLLVM to ROCm's LLVM (librocmllvm.so of PyPI's rocm-llvm-python)")
			return
		}
		lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			rocmLLVMErr = fmt.Errorf("ROCm LLVM %s: %w", path, err)
			return
		}
		l := &llvmC{}
		if rocmLLVMErr = bind(lib, path, l.table()); rocmLLVMErr != nil {
			return
		}
		l.initInfo()
		l.initTarget()
		l.initMC()
		l.initPrinter()
		rocmLLVM, rocmLLVMPath = l, path
	})
	return rocmLLVM, rocmLLVMPath, rocmLLVMErr
}

// hipFrontEnd is the clang that compiles HIP source to bitcode
// (XBENCH_CLANG_HIP, default Debian 12's clang-16) and where Debian keeps
// the ROCm device libraries (XBENCH_ROCM_DEVICE_LIBS).
func hipFrontEnd() (clang, devlibs string) {
	clang, devlibs = os.Getenv("XBENCH_CLANG_HIP"), os.Getenv("XBENCH_ROCM_DEVICE_LIBS")
	if clang == "" {
		clang = "clang-16"
	}
	if devlibs == "" {
		devlibs = "/usr/lib/" + archTriplet() + "/amdgcn/bitcode"
	}
	return clang, devlibs
}

// gfx942FrontArch is the CDNA3 target the front end knows.
const gfx942FrontArch = "gfx940"

// GFX942Compile compiles src with defines for gfx942 as the file comment
// says; the object must hold every kernel of want.
func GFX942Compile(program, src string, defines []string, want ...string) (HIPReport, error) {
	rep := HIPReport{Program: program, Arch: "gfx942"}
	l, llvmPath, err := openROCmLLVM()
	if err != nil {
		return rep, err
	}
	clang, devlibs := hipFrontEnd()
	ver, err := exec.Command(clang, "--version").Output()
	if err != nil {
		return rep, fmt.Errorf("HIP front end %s: %w", clang, err)
	}
	rep.Library = fmt.Sprintf("%s (front end, %s) + %s (back end)", clang, gfx942FrontArch, llvmPath)
	opts := append([]string{"-x", "hip", "--cuda-device-only", "--offload-arch=" + gfx942FrontArch,
		"--rocm-device-lib-path=" + devlibs, "-O3", "-std=c++17", "-include", "hip/hip_runtime.h", "-emit-llvm", "-c"}, defines...)
	stamp := fmt.Sprintf("%s\x00%s\x00gfx942", ver, llvmPath)
	if st, err := os.Stat(llvmPath); err == nil {
		stamp += fmt.Sprintf("\x00%d %d", st.Size(), st.ModTime().UnixNano())
	}
	image, log, err := cachedBuild(os.Getenv("XBENCH_HIPRTC_CACHE"), stamp, src, opts, func() ([]byte, string, error) {
		bc, log, err := hipToBitcode(clang, src, opts)
		if err != nil {
			return nil, log, err
		}
		obj, err := l.codegen(bc, "gfx942")
		return obj, log, err
	})
	rep.Log = log
	if err != nil {
		return rep, fmt.Errorf("%s for gfx942: %w", program, err)
	}
	rep.Image = len(image)
	if rep.Target, rep.Kernels, err = amdKernels(image); err != nil {
		return rep, fmt.Errorf("%s for gfx942: %w", program, err)
	}
	for _, w := range want {
		if _, ok := rep.Kernel(w); !ok {
			return rep, fmt.Errorf("%s for gfx942: the object has no kernel %s", program, w)
		}
	}
	return rep, nil
}

// hipToBitcode runs the front end on src in a scratch folder.
func hipToBitcode(clang, src string, opts []string) ([]byte, string, error) {
	dir, err := os.MkdirTemp("", "xbench-gfx942-*")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "k.hip"), filepath.Join(dir, "k.bc")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		return nil, "", err
	}
	log, err := exec.Command(clang, append(opts, in, "-o", out)...).CombinedOutput()
	if err != nil {
		return nil, string(log), fmt.Errorf("%s: %w", clang, err)
	}
	bc, err := os.ReadFile(out)
	return bc, string(log), err
}

// codegen retargets bitcode to cpu and generates its object file.
func (l *llvmC) codegen(bc []byte, cpu string) ([]byte, error) {
	rocmLLVMMu.Lock()
	defer rocmLLVMMu.Unlock()
	ctx := l.contextCreate()
	defer l.disposeCtx(ctx)
	buf := l.bufferCopy(unsafe.Pointer(&bc[0]), uint64(len(bc)), cString("kernels.bc"))
	defer l.disposeBuf(buf)
	var mod uintptr
	if l.parseBitcode(ctx, buf, &mod) != 0 {
		return nil, fmt.Errorf("ROCm LLVM could not read the front end's bitcode")
	}
	defer l.disposeModule(mod)
	for f := l.firstFunc(mod); f != 0; f = l.nextFunc(f) {
		l.addFuncAttr(f, cString("target-cpu"), cString(cpu)) // replaces the front end's gfx940
	}
	triple := cString("amdgcn-amd-amdhsa")
	var target uintptr
	var msg *byte
	if l.targetFor(triple, &target, &msg) != 0 {
		return nil, fmt.Errorf("ROCm LLVM has no AMDGPU target: %s", goString(msg))
	}
	tm := l.newTM(target, triple, cString(cpu), cString(""), 3, 0, 0) // aggressive, default reloc and code model
	defer l.disposeTM(tm)
	l.setLayout(mod, l.tmLayout(tm)) // LLVM 16's layout string predates ROCm 7's address spaces
	var out uintptr
	if l.emit(tm, mod, 1, &msg, &out) != 0 { // LLVMObjectFile
		return nil, fmt.Errorf("ROCm LLVM code generation for %s: %s", cpu, goString(msg))
	}
	defer l.disposeBuf(out)
	obj := unsafe.Slice((*byte)(l.bufStart(out)), l.bufSize(out))
	return append([]byte(nil), obj...), nil
}
