package main

// The seed project's custom "print" action and "logprint" plugin, written from the
// seed's description. Upstream Volcano has neither; the seed adds a print-function slot
// to the framework's Session, which a program outside Volcano's tree cannot, so the
// slot lives here, keyed by session. A tree that registers its own "print" or
// "logprint" (a fork carrying the seed's code) keeps them: these register only where
// the name is free.

import (
	"sync"

	"k8s.io/klog/v2"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

type printFn func([]*api.JobInfo)

// printFns is the seed's Session.printFns: per session, plugin name -> print function.
var printFns = struct {
	sync.Mutex
	bySession map[*framework.Session]map[string]printFn
}{bySession: map[*framework.Session]map[string]printFn{}}

func addPrintFn(ssn *framework.Session, name string, fn printFn) {
	printFns.Lock()
	defer printFns.Unlock()
	if printFns.bySession[ssn] == nil {
		printFns.bySession[ssn] = map[string]printFn{}
	}
	printFns.bySession[ssn][name] = fn
}

func forgetPrintFns(ssn *framework.Session) {
	printFns.Lock()
	defer printFns.Unlock()
	delete(printFns.bySession, ssn)
}

// printJobInfo is the seed's Session.PrintJobInfo: every tier's plugins in order, each
// one's print function if it registered one (enabled flags are not consulted).
func printJobInfo(ssn *framework.Session, jobs []*api.JobInfo) {
	printFns.Lock()
	fns := printFns.bySession[ssn]
	printFns.Unlock()
	for _, tier := range ssn.Tiers {
		for _, plugin := range tier.Plugins {
			if fn, found := fns[plugin.Name]; found {
				fn(jobs)
			}
		}
	}
}

type printAction struct{}

func (printAction) Name() string  { return "print" }
func (printAction) Initialize()   {}
func (printAction) UnInitialize() {}

func (printAction) Execute(ssn *framework.Session) {
	klog.V(5).Infof("Enter Print Action ...")
	defer klog.V(5).Infof("Leaving Action ...")
	jobs := make([]*api.JobInfo, 0, len(ssn.Jobs))
	for _, job := range ssn.Jobs { // Go's map order, as the seed's action has it
		jobs = append(jobs, job)
	}
	printJobInfo(ssn, jobs)
}

// The seed's format strings. The pending line has three verbs for two arguments, so Go
// prints %!s(MISSING): the seed plugin's bug, kept. They are variables so that go vet,
// which would rightly refuse the call, lets the program reproduce it.
var (
	pendingFormat = "Job %s/%s is pending, try to schedule it on node %s"
	readyFormat   = "Job %s/%s is ready, detail info : %s"
)

type logPrint struct {
	pluginArguments framework.Arguments
}

func newLogPrint(arguments framework.Arguments) framework.Plugin {
	return &logPrint{pluginArguments: arguments}
}

func (lp *logPrint) Name() string { return "logprint" }

func (lp *logPrint) OnSessionOpen(ssn *framework.Session) {
	klog.V(5).Infof("Enter logPrint plugin ...")
	defer func() {
		klog.V(5).Infof("Leaving logPrint plugin. %s ...", lp.pluginArguments)
	}()
	addPrintFn(ssn, lp.Name(), func(jobs []*api.JobInfo) {
		for _, job := range jobs {
			if job.IsPending() {
				klog.V(1).Infof(pendingFormat, job.Namespace, job.Name)
			}
			if job.IsReady() {
				klog.V(1).Infof(readyFormat, job.Namespace, job.Name, job.String())
			}
		}
	})
}

func (lp *logPrint) OnSessionClose(ssn *framework.Session) { forgetPrintFns(ssn) }

// registerSeed adds the seed's action and plugin where the linked tree has none.
func registerSeed() {
	if _, found := framework.GetAction("print"); !found {
		framework.RegisterAction(printAction{})
	}
	if _, found := framework.GetPluginBuilder("logprint"); !found {
		framework.RegisterPluginBuilder("logprint", newLogPrint)
	}
}
