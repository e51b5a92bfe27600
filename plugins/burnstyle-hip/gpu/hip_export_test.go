package gpu

import (
	"encoding/binary"
	"math"
)

// RunProbe compiles body after the prelude (the device's compiler, so the
// HIP face sees XB_HIP), launches kernel name as one block of threads with
// a float output of n entries, and returns it: a way to state one property
// of the device (the emulator's wavefront width) apart from the workloads.
func RunProbe(d *Device, body, name string, threads, n int) ([]float32, error) {
	prelude, err := kernelFS.ReadFile("kernels/prelude.cuh")
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	err = d.w.do(func() error {
		r := d.rt
		mod, _, err := r.module(string(prelude)+body, []string{"-DXB_BF16=0"})
		if err != nil {
			return err
		}
		defer r.drv.moduleUnload(mod)
		fn, err := r.function(mod, name)
		if err != nil {
			return err
		}
		p, err := r.alloc(int64(4 * n))
		if err != nil {
			return err
		}
		defer r.free(p)
		if err := r.launch(name, fn, [3]int{1, 1, 1}, [3]int{threads, 1, 1}, 0, p); err != nil {
			return err
		}
		if err := r.sync(); err != nil {
			return err
		}
		raw := make([]byte, 4*n)
		if err := r.dtoh(raw, p); err != nil {
			return err
		}
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return nil
	})
	return out, err
}
