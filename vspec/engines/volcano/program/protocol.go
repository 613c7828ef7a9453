package main

import (
	"encoding/json"
)

// Request is one line of the program's standard input: a session to run, or a
// question about the program itself ("hello").
type Request struct {
	ID string `json:"id"`
	// Op is "run" (one scheduling session), "probe" (questions asked of a session no
	// action runs in, see probes.go) or "hello" (what this build links).
	Op string `json:"op"`
	// Conf is volcano-scheduler.conf as YAML text, every plugin flag written out.
	Conf      string  `json:"conf"`
	Options   Options `json:"options"`
	Seed      int64   `json:"seed"`
	Verbosity int     `json:"verbosity"`
	// Now is the scheduler's clock at this session (RFC 3339): time.Now() reads it.
	Now string `json:"now"`
	// Reseed restarts math/rand from Seed: the first session of a spec.
	Reseed bool `json:"reseed"`
	// Fresh starts a new scheduler: its first request (a probe or a session) resets
	// Volcano's package-level state as a new process holds it.
	Fresh   bool    `json:"fresh"`
	Cluster Cluster `json:"cluster"`
	// Capture asks for the in-session task and pod group states (the spec's last cycle).
	Capture bool `json:"capture"`
	// Probes are the questions of a "probe" request.
	Probes []ProbeQuery `json:"probes,omitempty"`
}

// Options are the vc-scheduler command-line options that change scheduling.
type Options struct {
	MinNodesToFind             int32    `json:"minNodesToFind"`
	MinPercentageOfNodesToFind int32    `json:"minPercentageOfNodesToFind"`
	PercentageOfNodesToFind    int32    `json:"percentageOfNodesToFind"`
	SchedulerNames             []string `json:"schedulerNames"`
	DefaultQueue               string   `json:"defaultQueue"`
}

// Cluster holds Kubernetes objects in their JSON form, in the order the spec declared
// them: the scheduler cache takes them in this order, as Volcano's unit-test helper does.
type Cluster struct {
	Nodes           []json.RawMessage `json:"nodes"`
	Pods            []json.RawMessage `json:"pods"`
	PodGroups       []json.RawMessage `json:"podGroups"`
	Queues          []json.RawMessage `json:"queues"`
	PriorityClasses []json.RawMessage `json:"priorityClasses"`
	// Objects are every other manifest (ResourceQuota, PodDisruptionBudget,
	// Numatopology, PersistentVolume...), each with apiVersion and kind.
	Objects []json.RawMessage `json:"objects"`
	// Usage is each node's measured load, which Volcano's metrics source sets on the
	// cache's nodes (a spec gives it instead of a metrics server).
	Usage map[string]NodeUsage `json:"usage"`
}

// NodeUsage is a node's average CPU and memory use in percent, per period ("5m").
type NodeUsage struct {
	CPU    map[string]float64 `json:"cpu"`
	Memory map[string]float64 `json:"memory"`
	Time   string             `json:"time"`
}

// Response is one line of standard output, answering the request with the same ID.
type Response struct {
	ID string `json:"id"`
	// Hello's answer.
	Volcano string `json:"volcano,omitempty"`
	Go      string `json:"go,omitempty"`
	// Goroutines running as hello is answered: a process that serves spec after spec
	// must not keep those of the specs it served.
	Goroutines int `json:"goroutines,omitempty"`

	Binds     []Bind                    `json:"binds"`
	Evictions []Eviction                `json:"evictions"`
	PodGroups map[string]PodGroupResult `json:"podGroups"`
	Tasks     map[string]TaskResult     `json:"tasks"`
	Pipelined map[string][]TaskOnNode   `json:"pipelined"`
	Events    []Event                   `json:"events"`
	Logs      []LogRun                  `json:"logs"`
	// Patched holds the annotations a session patched onto pods (device shares), which
	// the next session's cluster carries.
	Patched  map[string]map[string]string `json:"patched,omitempty"`
	Warnings []string                     `json:"warnings,omitempty"`
	// Probes answers a "probe" request's questions, one answer each, in order.
	Probes []ProbeAnswer `json:"probes,omitempty"`
	// Cost is the CPU the request took, by phase.
	Cost  *Cost    `json:"cost,omitempty"`
	Error *Failure `json:"error,omitempty"`
}

// Bind is one pod bound by the session's binder.
type Bind struct {
	Task string `json:"task"`
	Node string `json:"node"`
}

// Eviction is one pod handed to the evictor.
type Eviction struct {
	Task   string `json:"task"`
	Reason string `json:"reason"`
}

// Condition is a pod group condition as the job updater wrote it.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	TransitionID       string `json:"transitionID"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// PodGroupResult is a job's pod group: its in-session phase after the last action
// and the status the job updater computed at close.
type PodGroupResult struct {
	SessionPhase string      `json:"sessionPhase"`
	Phase        string      `json:"phase"`
	Conditions   []Condition `json:"conditions"`
	Running      int32       `json:"running"`
	Succeeded    int32       `json:"succeeded"`
	Failed       int32       `json:"failed"`
	// Written: the job updater wrote the pod group (its status changed, stamps aside);
	// the others stay as the API server holds them for the next session.
	Written bool `json:"written"`
}

// TaskResult is a task as the session held it after the last action.
type TaskResult struct {
	Node   string `json:"node"`
	Status string `json:"status"`
}

// TaskOnNode is a pipelined task and the node it waits for.
type TaskOnNode struct {
	Task string `json:"task"`
	Node string `json:"node"`
}

// Event is a Kubernetes event the scheduler recorded.
type Event struct {
	Kind    string `json:"kind"`
	Object  string `json:"object"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// LogRun is consecutive klog calls from one call site at one V level and severity
// (I, W, E, F): line i's text is Head + Texts[i]. Volcano logs a line per failing task
// and node at -v 3, millions in a large session, mostly in runs that share a head
// ("Predicates failed: task ..."): a run sends each such line's own part only.
type LogRun struct {
	V        int      `json:"v"`
	Severity string   `json:"s"`
	Source   string   `json:"source"`
	Head     string   `json:"head"`
	Texts    []string `json:"texts"`
}

// Failure says why a session did not finish: a Go panic (with the top of its stack),
// a conf Volcano rejects, or an object it cannot read.
type Failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Stack   string `json:"stack,omitempty"`
}
