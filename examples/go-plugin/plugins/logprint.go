// logprint, written from the seed project's description as a standalone plugin: built
// with `go build -buildmode=plugin -o logprint.so logprint.go` it loads into a stock
// vc-scheduler with --plugins-dir; vspec compiles the same file into its engine.
//
// The seed's own logprint hands its function to a `print` action through a new
// Session.AddPrintFn, which only a fork of Volcano has. A standalone plugin has no such
// hook, so this one logs the same lines itself when the session opens: for each job,
// at V(1), the pending line (whose third verb has no argument: Go prints %!s(MISSING),
// the seed's bug kept) and the ready line with JobInfo.String().
package main

import (
	"k8s.io/klog/v2"

	"volcano.sh/volcano/pkg/scheduler/framework"
)

const pluginName = "logprint"

// Kept in variables: go vet would rightly refuse the pending line's missing argument.
var (
	pendingFormat = "Job %s/%s is pending, try to schedule it on node %s"
	readyFormat   = "Job %s/%s is ready, detail info : %s"
)

type logPrint struct {
	pluginArguments framework.Arguments
}

// New is what Volcano's loader looks up: framework.PluginBuilder is a type alias, so a
// plain function of this shape is one.
func New(arguments framework.Arguments) framework.Plugin {
	return &logPrint{pluginArguments: arguments}
}

func (lp *logPrint) Name() string { return pluginName }

func (lp *logPrint) OnSessionOpen(ssn *framework.Session) {
	klog.V(5).Infof("Enter logPrint plugin ...")
	defer func() {
		klog.V(5).Infof("Leaving logPrint plugin. %s ...", lp.pluginArguments)
	}()
	for _, job := range ssn.Jobs {
		if job.IsPending() {
			klog.V(1).Infof(pendingFormat, job.Namespace, job.Name)
		}
		if job.IsReady() {
			klog.V(1).Infof(readyFormat, job.Namespace, job.Name, job.String())
		}
	}
}

func (lp *logPrint) OnSessionClose(*framework.Session) {}
