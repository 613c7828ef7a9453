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
// is patched, once, to read clockAt (Unix nanoseconds), which each session sets to its
// "now". The clock stands still within a session, as vspec's engine's does: a
// session's times are all its "now", and durations Volcano measures are zero.
var clockAt atomic.Int64

// installClock patches time.Now for the whole process (gomonkey, which Volcano's own
// tests use; time.Now is too large for the compiler to inline, so every caller goes
// through the patched function).
func installClock() {
	gomonkey.ApplyFunc(time.Now, func() time.Time {
		if at := clockAt.Load(); at != 0 {
			return time.Unix(0, at).UTC()
		}
		return realNow()
	})
}

// realNow reads the wall clock without time.Now: the program's own deadlines.
func realNow() time.Time {
	var tv syscall.Timeval
	_ = syscall.Gettimeofday(&tv)
	return time.Unix(tv.Sec, int64(tv.Usec)*1000)
}

// setClock makes time.Now() read "now".
func setClock(now time.Time) {
	clockAt.Store(now.UnixNano())
}

// rescheduleStart is when Volcano's rescheduling plugin counts its interval from: the
// process's start, read in the package's init, before the program can move the clock.
//
//go:linkname rescheduleStart volcano.sh/volcano/pkg/scheduler/plugins/rescheduling.lastRescheduleTime
var rescheduleStart time.Time

// startScheduler is a fresh vc-scheduler's start, a moment before its first session:
// what Volcano's packages read from the clock when the process starts is read again.
// (A real process starts milliseconds before its first session, so an interval counted
// from the start has run out in the session one interval later.)
func startScheduler() {
	rescheduleStart = time.Now().Add(-time.Nanosecond)
}
