package gpu

import (
	"sync"

	"github.com/xbench/xbench/harness/result"
)

// SharedInfo describes the process-wide CUDA device (kind, name, driver), or
// just the kind when it does not open: what an export reply names.
func SharedInfo() result.Device { return SharedInfoOf("cuda") }

// SharedInfoOf is SharedInfo for the device of kind.
func SharedInfoOf(kind string) result.Device {
	d, err := Shared(kind)
	if err != nil {
		return result.Device{Kind: kind, Count: 1}
	}
	return d.Info()
}

var shared struct {
	sync.Mutex
	devs map[string]*Device
	errs map[string]error
}

// Shared opens kind once per process and keeps it open: a context costs
// about a second to create, and the backend asks for an engine per request.
func Shared(kind string) (*Device, error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.devs == nil {
		shared.devs, shared.errs = map[string]*Device{}, map[string]error{}
	}
	if d, ok := shared.devs[kind]; ok {
		return d, shared.errs[kind]
	}
	d, err := Open(kind)
	shared.devs[kind], shared.errs[kind] = d, err
	return d, err
}
