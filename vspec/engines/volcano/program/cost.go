package main

import "syscall"

// Cost is the program's CPU seconds (every thread, the garbage collector's included)
// spent on a request, split where vspec's overhead ends and Volcano's own work begins.
type Cost struct {
	// Decode reads the request's JSON line.
	Decode float64 `json:"decode"`
	// Prepare loads the conf and fills the scheduler cache with the cluster.
	Prepare float64 `json:"prepare"`
	// Session is Volcano's own: OpenSession, the actions, CloseSession and the
	// binds and status updates it dispatched (and reading the session's tasks for the
	// answer before it closes, a small part).
	Session float64 `json:"session"`
	// Answer gathers the response (tasks, pod groups, logs) before it is encoded.
	Answer float64 `json:"answer"`
}

// cpuSeconds is the process's user and system time so far.
func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return seconds(usage.Utime) + seconds(usage.Stime)
}

func seconds(t syscall.Timeval) float64 {
	return float64(t.Sec) + float64(t.Usec)/1e6
}
