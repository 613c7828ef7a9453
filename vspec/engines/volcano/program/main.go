// Command volcano-engine runs Volcano's own scheduler code on clusters that vspec sends:
// one JSON request a line on standard input, one JSON response a line on standard
// output, one process serving many sessions. See protocol.go for the messages.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"volcano.sh/volcano/cmd/scheduler/app/options"
	_ "volcano.sh/volcano/pkg/scheduler/actions"
	_ "volcano.sh/volcano/pkg/scheduler/plugins"
)

// protocolOut keeps the real standard output for responses; everything else that
// writes to os.Stdout goes to standard error instead.
func protocolOut() *os.File {
	fd, err := syscall.Dup(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "volcano-engine: cannot keep standard output:", err)
		os.Exit(2)
	}
	_ = syscall.Dup2(2, 1)
	return os.NewFile(uintptr(fd), "protocol")
}

// linkedVolcano names the Volcano this program was built against: a module version, or
// the directory of a source tree.
func linkedVolcano() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path != "volcano.sh/volcano" {
			continue
		}
		if dep.Replace != nil {
			if dep.Replace.Version != "" {
				return dep.Replace.Version
			}
			return "source " + dep.Replace.Path
		}
		return dep.Version
	}
	return "unknown"
}

// serve answers one request; a panic in Volcano's code, in the session or in one of
// its worker goroutines, becomes the request's failure with the top of its stack, and
// the process goes on to the next one.
func serve(req *Request, logs *capture, setVerbosity func(int)) (resp *Response) {
	workerPanics.take()
	running := runtime.NumGoroutine()
	defer func() {
		workerPanics.awaitWorkers(running)
		failure := workerPanics.take()
		if r := recover(); r != nil && failure == nil {
			failure = &Failure{Kind: "panic", Message: fmt.Sprint(r), Stack: topOfStack(debug.Stack())}
		}
		if failure != nil {
			resp = &Response{ID: req.ID, Logs: logs.take(), Error: failure}
		}
	}()
	switch req.Op {
	case "hello":
		return &Response{
			ID: req.ID, Volcano: linkedVolcano(), Go: runtime.Version(), Goroutines: runtime.NumGoroutine(),
		}
	case "run", "probe":
		session := runSession
		if req.Op == "probe" {
			session = probeSession
		}
		resp, err := session(req, logs, setVerbosity)
		if err != nil {
			kind := "engine"
			if e, ok := err.(errorOf); ok {
				kind = e.kind
			}
			return &Response{ID: req.ID, Logs: logs.take(), Error: &Failure{Kind: kind, Message: err.Error()}}
		}
		return resp
	default:
		return &Response{ID: req.ID, Error: &Failure{Kind: "request", Message: fmt.Sprintf("unknown op %q", req.Op)}}
	}
}

// topOfStack keeps the frames below the panic, without the runtime's and this
// program's own, at most a dozen.
func topOfStack(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "panic(") && i+2 < len(lines) {
			lines = lines[i+2:]
			break
		}
	}
	if len(lines) > 24 {
		lines = lines[:24]
	}
	return strings.Join(lines, "\n")
}

func main() {
	out := json.NewEncoder(protocolOut())
	logs := &capture{}
	setVerbosity := installCapture(logs)
	options.Default()
	catchWorkerPanics()
	registerSeed()
	installClock()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			req := &Request{}
			var resp *Response
			read := cpuSeconds()
			if jerr := json.Unmarshal(line, req); jerr != nil {
				resp = &Response{Error: &Failure{Kind: "request", Message: jerr.Error()}}
			} else {
				decoded := cpuSeconds()
				resp = serve(req, logs, setVerbosity)
				if resp.Cost != nil {
					resp.Cost.Decode = decoded - read
				}
			}
			if werr := out.Encode(resp); werr != nil {
				fmt.Fprintln(os.Stderr, "volcano-engine:", werr)
				os.Exit(2)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "volcano-engine:", err)
			os.Exit(2)
		}
	}
}
