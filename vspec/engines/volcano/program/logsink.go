package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// capture collects every klog call of a session as one LogLine. klog hands each call to
// the logr sink below with its V level, which its own text output would drop.
type capture struct {
	mu    sync.Mutex
	lines []LogLine
}

func (c *capture) add(line LogLine) {
	c.mu.Lock()
	c.lines = append(c.lines, line)
	c.mu.Unlock()
}

// take returns the lines logged since the last take and forgets them.
func (c *capture) take() []LogLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := c.lines
	c.lines = nil
	if lines == nil {
		lines = []LogLine{}
	}
	return lines
}

var klogFlags = flag.NewFlagSet("klog", flag.ContinueOnError)

// installCapture routes klog into c and returns a function that sets the -v level.
func installCapture(c *capture) func(int) {
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("logtostderr", "false")
	_ = klogFlags.Set("alsologtostderr", "false")
	_ = klogFlags.Set("stderrthreshold", "FATAL")
	klog.SetLogger(logr.New(&sink{out: c}))
	return func(v int) { _ = klogFlags.Set("v", strconv.Itoa(v)) }
}

// sink is a logr.LogSink that records klog's calls. klog has already applied the -v
// filter when a call reaches it.
type sink struct {
	out *capture
}

func (s *sink) Init(logr.RuntimeInfo)        {}
func (s *sink) Enabled(int) bool             { return true }
func (s *sink) WithName(string) logr.LogSink { return s }
func (s *sink) WithValues(...interface{}) logr.LogSink {
	return s
}

func (s *sink) Info(level int, msg string, kv ...interface{}) {
	severity, source := callSite()
	s.out.add(LogLine{V: level, Severity: severity, Text: render(msg, kv), Source: source})
}

func (s *sink) Error(err error, msg string, kv ...interface{}) {
	_, source := callSite()
	if err != nil {
		kv = append(kv, "err", err)
	}
	s.out.add(LogLine{V: 0, Severity: "E", Text: render(msg, kv), Source: source})
}

// render gives a structured call (InfoS, ErrorS) klog's text form: the quoted message
// and key="value" pairs; a printf-style call has none and is its text.
func render(msg string, kv []interface{}) string {
	if len(kv) == 0 {
		return strings.TrimSuffix(msg, "\n")
	}
	var b strings.Builder
	b.WriteString(strconv.Quote(msg))
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%q", kv[i], fmt.Sprint(kv[i+1]))
	}
	return b.String()
}

// callSite finds the call that logged: the first frame outside klog, logr and this
// file. klog hands warnings and infos to a logr sink alike, so a Warning* frame on the
// way there is what marks a warning.
func callSite() (severity string, source string) {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	severity = "I"
	for {
		frame, more := frames.Next()
		fn := frame.Function
		switch {
		case strings.HasPrefix(fn, "k8s.io/klog/v2.Warning"), strings.HasPrefix(fn, "k8s.io/klog/v2.(*Verbose).Warning"):
			severity = "W"
		case strings.HasPrefix(fn, "k8s.io/klog/v2.Fatal"), strings.HasPrefix(fn, "k8s.io/klog/v2.Exit"):
			severity = "F"
		}
		if !strings.HasPrefix(fn, "k8s.io/klog/") && !strings.HasPrefix(fn, "github.com/go-logr/") &&
			!strings.HasPrefix(fn, "main.(*sink)") && fn != "main.callSite" {
			return severity, fmt.Sprintf("%s:%d", filepath.Base(frame.File), frame.Line)
		}
		if !more {
			return severity, ""
		}
	}
}
