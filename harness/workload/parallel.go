package workload

import (
	"runtime"
	"sync"
)

// Parallel calls f once for every job in [0, jobs) on every core, job j on
// worker j mod workers. The float64 references use it over independent rows:
// each row is computed by one goroutine in one order, so the result does not
// depend on the scheduling.
func Parallel(jobs int, f func(job int)) {
	workers := min(runtime.GOMAXPROCS(0), jobs)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < jobs; j += workers {
				f(j)
			}
		}()
	}
	wg.Wait()
}
