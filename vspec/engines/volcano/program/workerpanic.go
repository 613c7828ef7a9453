package main

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Volcano scores and filters nodes in worker goroutines (workqueue.ParallelizeUntil),
// whose HandleCrash re-panics: in vc-scheduler a panic there ends the process. Here that
// would be a race, not an answer: the worker releases its WaitGroup before HandleCrash
// runs, so the session may finish and its response go out before the runtime ends the
// process, and the crash then lands on the next spec's request. So HandleCrash does not
// re-panic in this program; it hands the panic to workerPanic, serve waits for Volcano's
// worker goroutines to end, and reports the panic as the failure of the request
// whose session raised it, every time.
type workerPanic struct {
	mu    sync.Mutex
	first *Failure
	// stacks is awaitWorkers' buffer for every goroutine's stack.
	stacks []byte
}

var workerPanics workerPanic

// catchWorkerPanics turns HandleCrash's re-panic off and records each panic it sees.
// PanicHandlers' element type differs between Kubernetes releases (v0.31 added a
// context argument), so the handler is made for whichever this build links.
func catchWorkerPanics() {
	utilruntime.ReallyCrash = false
	handlers := reflect.ValueOf(&utilruntime.PanicHandlers).Elem()
	handler := reflect.MakeFunc(handlers.Type().Elem(), func(args []reflect.Value) []reflect.Value {
		workerPanics.record(args[len(args)-1].Interface())
		return nil
	})
	handlers.Set(reflect.Append(handlers, handler))
}

// record keeps the first panic of a session: the later ones follow from it.
func (w *workerPanic) record(r any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first == nil {
		w.first = &Failure{Kind: "panic", Message: fmt.Sprint(r), Stack: topOfStack(debug.Stack())}
	}
}

// take returns the session's worker panic, if any, and forgets it.
func (w *workerPanic) take() *Failure {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := w.first
	w.first = nil
	return first
}

// How long serve waits for Volcano's worker goroutines to end: one that panicked ends
// microseconds after its WaitGroup let the session go on.
const workerGrace = 200 * time.Millisecond

// parallelWorker is the frame of a workqueue.ParallelizeUntil worker in a goroutine's
// stack.
var parallelWorker = []byte("k8s.io/client-go/util/workqueue.ParallelizeUntil.func")

// awaitWorkers returns once no ParallelizeUntil worker runs (after their session, only a
// panicking one can), or after workerGrace. No more goroutines than before the session
// (running) means none does: the session's other goroutines (the cache's queues and
// bind taker, a cluster's informers) end soon after it and may outlive it, so while
// there are more, the workers are told apart by their stacks, now and then (reading
// every stack stops the world).
func (w *workerPanic) awaitWorkers(running int) {
	deadline := realNow().Add(workerGrace)
	for spins := 1; runtime.NumGoroutine() > running; spins++ {
		if spins%64 == 0 && !w.workerRuns() || !realNow().Before(deadline) {
			return
		}
		runtime.Gosched()
	}
}

// workerRuns says whether a goroutine runs a ParallelizeUntil worker.
func (w *workerPanic) workerRuns() bool {
	if w.stacks == nil {
		w.stacks = make([]byte, 1<<20)
	}
	n := runtime.Stack(w.stacks, true)
	return bytes.Contains(w.stacks[:n], parallelWorker)
}
