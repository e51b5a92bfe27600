package gpu

import (
	"errors"
	"fmt"
	"runtime"
)

// worker runs closures on one goroutine locked to one OS thread. A CUDA (or
// HIP) context is current per OS thread; a goroutine may move between threads
// between any two calls, after which the driver answers
// CUDA_ERROR_INVALID_CONTEXT. Every driver call goes through do.
type worker struct {
	jobs chan func()
	done chan struct{}
}

func newWorker() *worker {
	w := &worker{jobs: make(chan func()), done: make(chan struct{})}
	go func() {
		// Never unlocked: when the goroutine ends the thread ends with it,
		// taking any context state along instead of leaking it to others.
		runtime.LockOSThread()
		defer close(w.done)
		for f := range w.jobs {
			f()
		}
	}()
	return w
}

var errClosed = errors.New("gpu: device is closed")

// do runs f on the worker thread and returns its error; a panic inside f
// comes back as an error so the worker survives it.
func (w *worker) Do(f func() error) (err error) {
	if w == nil || w.jobs == nil {
		return errClosed
	}
	res := make(chan error, 1)
	w.jobs <- func() {
		defer func() {
			if r := recover(); r != nil {
				res <- fmt.Errorf("gpu: panic on the device thread: %v", r)
			}
		}()
		res <- f()
	}
	return <-res
}

// stop ends the worker after the jobs already queued.
func (w *worker) stop() {
	if w == nil || w.jobs == nil {
		return
	}
	close(w.jobs)
	<-w.done
	w.jobs = nil
}
