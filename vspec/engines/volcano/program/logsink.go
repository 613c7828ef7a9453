package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// capture collects every klog call of a session, in runs (LogRun). klog hands each
// call to the logr sink below with its V level, which its own text output would drop.
type capture struct {
	mu   sync.Mutex
	runs []LogRun
}

func (c *capture) add(v int, severity, text, source string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.runs); n > 0 {
		last := &c.runs[n-1]
		if last.V == v && last.Severity == severity && last.Source == source {
			last.Texts = append(last.Texts, text)
			last.Head = commonPrefix(last.Head, text)
			return
		}
	}
	c.runs = append(c.runs, LogRun{V: v, Severity: severity, Source: source, Head: text, Texts: []string{text}})
}

// commonPrefix is the longest prefix of both that ends on a character boundary.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	for i > 0 && i < len(a) && !utf8.RuneStart(a[i]) {
		i--
	}
	return a[:i]
}

// take returns the runs logged since the last take, each text less its run's head,
// and forgets them.
func (c *capture) take() []LogRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	runs := c.runs
	c.runs = nil
	for _, run := range runs {
		for i, text := range run.Texts {
			run.Texts[i] = text[len(run.Head):]
		}
	}
	if runs == nil {
		runs = []LogRun{}
	}
	return runs
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
	s.out.add(level, severity, render(msg, kv), source)
}

func (s *sink) Error(err error, msg string, kv ...interface{}) {
	_, source := callSite()
	if err != nil {
		kv = append(kv, "err", err)
	}
	s.out.add(0, "E", render(msg, kv), source)
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
// way there is what marks a warning. Volcano logs a line per node and task at -v 3, so
// what each return address says is worked out once and kept (sites).
func callSite() (severity string, source string) {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	severity = "I"
	for _, pc := range pcs[:n] {
		site := siteOf(pc)
		if site.severity != "" {
			severity = site.severity
		}
		if site.caller {
			return severity, site.source
		}
	}
	return severity, ""
}

// site is what one return address of a logging call's stack tells: the severity a
// klog frame marks, or, for the first frame outside klog, logr and this file, its place.
type site struct {
	severity string
	caller   bool
	source   string
}

// sites holds each return address's site for the life of the process: the code does
// not move, so what an address says never changes.
var sites sync.Map

func siteOf(pc uintptr) site {
	if known, ok := sites.Load(pc); ok {
		return known.(site)
	}
	var found site
	// One address may stand for several frames (inlined calls): the innermost first.
	frames := runtime.CallersFrames([]uintptr{pc})
	for more := true; more && !found.caller; {
		var frame runtime.Frame
		frame, more = frames.Next()
		fn := frame.Function
		switch {
		case strings.HasPrefix(fn, "k8s.io/klog/v2.Warning"), strings.HasPrefix(fn, "k8s.io/klog/v2.(*Verbose).Warning"):
			found.severity = "W"
		case strings.HasPrefix(fn, "k8s.io/klog/v2.Fatal"), strings.HasPrefix(fn, "k8s.io/klog/v2.Exit"):
			found.severity = "F"
		}
		if !strings.HasPrefix(fn, "k8s.io/klog/") && !strings.HasPrefix(fn, "github.com/go-logr/") &&
			!strings.HasPrefix(fn, "main.(*sink)") && fn != "main.callSite" {
			found.caller, found.source = true, fmt.Sprintf("%s:%d", filepath.Base(frame.File), frame.Line)
		}
	}
	sites.Store(pc, found)
	return found
}
