// Package gpu runs the TTT model of docs/workloads/ttt.md on a GPU from plain
// Go: the CUDA driver, NVRTC and cuBLAS (or HIP and hipRTC) are loaded at run
// time through purego, with no cgo and no GPU SDK at build time. Kernels are
// compiled at model creation for its exact shape; the TTT inner loop of a
// layer is one launch. See ../docs/FLOOR.md for what the hardware allows.
package gpu

import (
	"errors"
	"fmt"
	"strings"

	"github.com/xbench/xbench/harness/result"
)

// Device is one opened GPU. All driver work happens on its worker thread.
type Device struct {
	w    *worker
	rt   *rt
	info result.Device
	// ltLib is the cuBLASLt handle of the gemm workload's cublaslt
	// variant, opened on first use (cublaslt.go); ltErr why it is not.
	ltLib *cublasLt
	ltErr error
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

func open(fn func() (*rt, error)) (*Device, error) {
	d := &Device{w: newWorker()}
	err := d.w.do(func() error {
		r, err := fn()
		d.rt = r
		if err != nil || r.blas == nil {
			return err
		}
		// cuBLAS gets its workspace from us, so PeakBytes counts it and
		// cuBLAS allocates nothing behind the count while timed calls run.
		if r.blas.ws, err = r.alloc(cublasWorkspace); err != nil {
			return err
		}
		return r.blas.check("set workspace", r.blas.setWorkspace(r.blas.h, uint64(r.blas.ws), cublasWorkspace))
	})
	if err != nil {
		d.w.stop()
		return nil, err
	}
	d.info = result.Device{Kind: d.rt.kind, Name: d.rt.name, Driver: d.rt.driver, Count: d.rt.count}
	return d, nil
}

// Info is what the harness records as where the run happened.
func (d *Device) Info() result.Device { return d.info }

// BLAS names the dense engine: the cuBLAS library path, or why there is none.
func (d *Device) BLAS() string {
	if d.rt.blas != nil {
		return "cuBLAS " + d.rt.blas.path
	}
	return fmt.Sprintf("portable GEMM kernels (%v)", d.rt.blasErr)
}

// Close releases the context; models of this device must be closed first.
func (d *Device) Close() {
	if d == nil || d.w == nil {
		return
	}
	d.w.do(func() error {
		if b := d.rt.blas; b != nil {
			b.destroy(b.h)
			if b.ws != 0 {
				d.rt.free(b.ws)
			}
		}
		if d.ltLib != nil {
			d.ltLib.destroy(d.ltLib.h)
		}
		if d.rt.release != nil {
			d.rt.release()
		}
		return nil
	})
	d.w.stop()
	d.w = nil
}
