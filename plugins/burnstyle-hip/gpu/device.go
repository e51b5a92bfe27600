// Package gpu is the native backend's GPU runtime, from plain Go: the CUDA
// driver, NVRTC, cuBLAS and cuBLASLt (or HIP and hipRTC) are loaded at run
// time through purego, with no cgo and no GPU SDK at build time. It holds
// what every workload shares: devices and their worker thread, device
// memory, run-time compilation of kernel programs (Program), launches,
// streams and events, graph capture, and the one timing loop
// (Runtime.TimedLaunches). The workloads live in packages of their own
// (ttt, gemm, attention, scan) that import this one, never the reverse.
package gpu

import (
	"errors"
	"fmt"
	"strings"

	"github.com/xbench/xbench/harness/result"
)

// Device is one opened GPU. All driver work happens on its worker thread.
type Device struct {
	W    *worker
	RT   *Runtime
	info result.Device
	// ltLib is the cuBLASLt handle of the gemm workload's cublaslt
	// variant, opened on first use (cublaslt.go); ltErr why it is not.
	ltLib *CublasLt
	ltErr error
	// hipLt and roc are hipBLASLt's and rocBLAS's handles on a rocm device
	// (the gemm workload and its rocblas variant), opened on first use.
	hipLt    *HipblasLt
	hipLtErr error
	roc      *Rocblas
	rocErr   error
}

// Open opens the first visible GPU of kind "cuda", "rocm" (or "hip"), or
// "auto" (CUDA, then ROCm). The error of a failed open names the libraries
// looked for and where, so a missing driver is easy to tell from a broken one.
func Open(kind string) (*Device, error) {
	switch strings.ToLower(kind) {
	case "cuda":
		return open(openCUDA)
	case "rocm", "hip":
		return open(openHIP)
	case "auto", "":
		d, errC := open(openCUDA)
		if errC == nil {
			return d, nil
		}
		d, errH := open(openHIP)
		if errH == nil {
			return d, nil
		}
		return nil, fmt.Errorf("gpu auto: no GPU runtime usable: %w", errors.Join(errC, errH))
	}
	return nil, fmt.Errorf("gpu: unknown device kind %q (want cuda, rocm or auto)", kind)
}

func open(fn func() (*Runtime, error)) (*Device, error) {
	d := &Device{W: newWorker()}
	err := d.W.Do(func() error {
		r, err := fn()
		d.RT = r
		if err != nil || r.BLAS == nil {
			return err
		}
		// cuBLAS gets its workspace from us, so PeakBytes counts it and
		// cuBLAS allocates nothing behind the count while timed calls run.
		if r.BLAS.WS, err = r.Alloc(CublasWorkspace); err != nil {
			return err
		}
		return r.BLAS.Check("set workspace", r.BLAS.SetWorkspace(r.BLAS.H, uint64(r.BLAS.WS), CublasWorkspace))
	})
	if err != nil {
		d.W.stop()
		return nil, err
	}
	d.info = result.Device{Kind: d.RT.Kind, Name: d.RT.Name, Driver: d.RT.driver, Count: d.RT.Count}
	return d, nil
}

// Info is what the harness records as where the run happened.
func (d *Device) Info() result.Device { return d.info }

// BLAS names the dense engine: the cuBLAS library path, or why there is none.
func (d *Device) BLAS() string {
	if d.RT.BLAS != nil {
		return "cuBLAS " + d.RT.BLAS.Path
	}
	return fmt.Sprintf("portable GEMM kernels (%v)", d.RT.BLASErr)
}

// Close releases the context; models of this device must be closed first.
func (d *Device) Close() {
	if d == nil || d.W == nil {
		return
	}
	d.W.Do(func() error {
		if b := d.RT.BLAS; b != nil {
			b.Destroy(b.H)
			if b.WS != 0 {
				d.RT.Free(b.WS)
			}
		}
		if d.ltLib != nil {
			d.ltLib.destroy(d.ltLib.H)
		}
		if d.hipLt != nil {
			d.hipLt.destroy(d.hipLt.H)
		}
		if d.roc != nil {
			d.roc.close(d.RT)
		}
		if d.RT.release != nil {
			d.RT.release()
		}
		return nil
	})
	d.W.stop()
	d.W = nil
}

// FreeBytes is the device memory the driver reports free.
func (d *Device) FreeBytes() (int64, error) {
	var free, total uint64
	err := d.W.Do(func() error { return d.RT.Check("memory info", d.RT.Drv.memGetInfo(&free, &total)) })
	return int64(free), err
}
