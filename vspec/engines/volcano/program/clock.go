package main

import (
	"sync/atomic"
	"syscall"
	"time"
	_ "unsafe" // go:linkname

	"github.com/agiledragon/gomonkey/v2"
)

// The scheduler's clock. Volcano reads time.Now() wherever it needs the time (tdm's
// revocable windows, sla's waiting time, cdp's cooldown, the vGPU handshake's age, the
// job updater's condition times), so the program runs it at the spec's clock: time.Now
// is patched, once, to the real time moved by clockOffset, which each session sets to
// its "now". Time still passes at the real rate within a session.
var clockOffset atomic.Int64

// installClock patches time.Now for the whole process (gomonkey, which Volcano's own
// tests use; time.Now is too large for the compiler to inline, so every caller goes
// through the patched function).
func installClock() {
	gomonkey.ApplyFunc(time.Now, func() time.Time {
		return realNow().Add(time.Duration(clockOffset.Load()))
	})
}

// realNow reads the wall clock without time.Now.
func realNow() time.Time {
	var tv syscall.Timeval
	_ = syscall.Gettimeofday(&tv)
	return time.Unix(tv.Sec, int64(tv.Usec)*1000)
}

// setClock makes time.Now() read "now" at this instant.
func setClock(now time.Time) {
	clockOffset.Store(int64(now.Sub(realNow())))
}

// rescheduleStart is when Volcano's rescheduling plugin counts its interval from: the
// process's start, read in the package's init, before the program can move the clock.
//
//go:linkname rescheduleStart volcano.sh/volcano/pkg/scheduler/plugins/rescheduling.lastRescheduleTime
var rescheduleStart time.Time

// startScheduler is a fresh vc-scheduler's start, at the clock's time: what Volcano's
// packages read from the clock when the process starts is read again.
func startScheduler() {
	rescheduleStart = time.Now()
}
