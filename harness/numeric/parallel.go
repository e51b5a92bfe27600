package numeric

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// NumWorkers is how many goroutines a parallel loop uses.
func NumWorkers() int { return runtime.GOMAXPROCS(0) }

// ParallelFor calls fn(worker, i) once for every i in [0, n), handing items
// to up to NumWorkers goroutines as they free up. worker is in
// [0, NumWorkers()) and lets fn use per-goroutine scratch space. Callers
// keep results deterministic by making item i write only its own outputs
// with a fixed order of operations, so which goroutine runs it never
// matters.
func ParallelFor(n int, fn func(worker, i int)) {
	w := min(NumWorkers(), n)
	if w <= 1 {
		for i := 0; i < n; i++ {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(w)
	for g := 0; g < w; g++ {
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(g, i)
			}
		}()
	}
	wg.Wait()
}
