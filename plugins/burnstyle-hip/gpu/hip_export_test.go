package gpu

import (
	"encoding/binary"
	"math"
	"testing/fstest"
)

// RunProbe compiles body after the prelude (the device's compiler, so the
// HIP face sees XB_HIP), launches kernel name as one block of threads with
// a float output of n entries, and returns it: a way to state one property
// of the device (the emulator's wavefront width) apart from the workloads.
func RunProbe(d *Device, body, name string, threads, n int) ([]float32, error) {
	out := make([]float32, n)
	err := d.W.Do(func() error {
		r := d.RT
		mod, _, err := r.Module(Program(fstest.MapFS{"kernels/probe.cu": {Data: []byte(body)}}, "probe.cu"), []string{"-DXB_BF16=0"})
		if err != nil {
			return err
		}
		defer r.Drv.ModuleUnload(mod)
		fn, err := r.Function(mod, name)
		if err != nil {
			return err
		}
		p, err := r.Alloc(int64(4 * n))
		if err != nil {
			return err
		}
		defer r.Free(p)
		if err := r.Launch(name, fn, [3]int{1, 1, 1}, [3]int{threads, 1, 1}, 0, p); err != nil {
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		raw := make([]byte, 4*n)
		if err := r.DtoH(raw, p); err != nil {
			return err
		}
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return nil
	})
	return out, err
}
