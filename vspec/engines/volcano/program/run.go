package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v2"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	nodeinfov1alpha1 "volcano.sh/apis/pkg/apis/nodeinfo/v1alpha1"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/plugins"
)

// errorOf is a failure of the request, not of Volcano: a conf or object it cannot read.
type errorOf struct {
	kind string
	err  error
}

func (e errorOf) Error() string { return e.err.Error() }

// loadConf reads the conf as vc-scheduler's UnmarshalSchedulerConf does (yaml.v2, the
// unset flags of each plugin defaulted, drf hierarchy with proportion in one tier
// refused, every action looked up), except that an empty actions string runs none.
func loadConf(text string) ([]framework.Action, []conf.Tier, []conf.Configuration, error) {
	sc := &conf.SchedulerConfiguration{}
	if err := yaml.Unmarshal([]byte(text), sc); err != nil {
		return nil, nil, nil, errorOf{"conf", err}
	}
	for i, tier := range sc.Tiers {
		hdrf, proportion := false, false
		for j := range tier.Plugins {
			option := &sc.Tiers[i].Plugins[j]
			if option.Name == "drf" && option.EnabledHierarchy != nil && *option.EnabledHierarchy {
				hdrf = true
			}
			proportion = proportion || option.Name == "proportion"
			plugins.ApplyPluginConfDefaults(option)
		}
		if hdrf && proportion {
			return nil, nil, nil, errorOf{"conf", fmt.Errorf("proportion and drf with hierarchy enabled conflicts")}
		}
	}
	var actions []framework.Action
	if strings.TrimSpace(sc.Actions) != "" {
		for _, name := range strings.Split(sc.Actions, ",") {
			action, found := framework.GetAction(strings.TrimSpace(name))
			if !found {
				return nil, nil, nil, errorOf{"conf", fmt.Errorf("failed to find Action %s, ignore it", name)}
			}
			actions = append(actions, action)
		}
	}
	for _, tier := range sc.Tiers {
		for _, option := range tier.Plugins {
			if _, found := framework.GetPluginBuilder(option.Name); !found {
				return nil, nil, nil, errorOf{"conf", fmt.Errorf("no plugin %q is registered in this Volcano build", option.Name)}
			}
		}
	}
	return actions, sc.Tiers, sc.Configurations, nil
}

func setOptions(o Options) {
	opts := options.ServerOpts
	opts.MinNodesToFind = o.MinNodesToFind
	opts.MinPercentageOfNodesToFind = o.MinPercentageOfNodesToFind
	opts.PercentageOfNodesToFind = o.PercentageOfNodesToFind
	if len(o.SchedulerNames) > 0 {
		opts.SchedulerNames = o.SchedulerNames
	}
	if o.DefaultQueue != "" {
		opts.DefaultQueue = o.DefaultQueue
	}
}

func decode[T any](raw json.RawMessage, what string) (*T, error) {
	obj := new(T)
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, errorOf{"object", fmt.Errorf("%s: %v", what, err)}
	}
	return obj, nil
}

// decodeServed reads the cluster's nodes and pods, which both the cache and the
// session's API client take.
func decodeServed(c Cluster) (*served, error) {
	s := &served{}
	for _, raw := range c.Nodes {
		node, err := decode[v1.Node](raw, "node")
		if err != nil {
			return nil, err
		}
		s.nodes = append(s.nodes, node)
	}
	for _, raw := range c.Pods {
		pod, err := decode[v1.Pod](raw, "pod")
		if err != nil {
			return nil, err
		}
		s.pods = append(s.pods, pod)
	}
	return s, nil
}

// fill hands the cluster to the cache in Volcano's unit-test helper's order (nodes,
// pods, pod groups, queues, priority classes, then the rest); kinds the cache reads
// through informers are served by its fake API client instead.
func fill(sc *cache.SchedulerCache, c Cluster, objects *served) ([]string, error) {
	for _, node := range objects.nodes {
		if err := sc.AddOrUpdateNode(node); err != nil {
			return nil, errorOf{"object", fmt.Errorf("node %s: %v", node.Name, err)}
		}
	}
	for _, pod := range objects.pods {
		sc.AddPod(pod)
	}
	for _, raw := range c.PodGroups {
		pg, err := decode[vcv1beta1.PodGroup](raw, "pod group")
		if err != nil {
			return nil, err
		}
		sc.AddPodGroupV1beta1(pg)
	}
	for _, raw := range c.Queues {
		queue, err := decode[vcv1beta1.Queue](raw, "queue")
		if err != nil {
			return nil, err
		}
		sc.AddQueueV1beta1(queue)
	}
	for _, raw := range c.PriorityClasses {
		pc, err := decode[schedulingv1.PriorityClass](raw, "priority class")
		if err != nil {
			return nil, err
		}
		sc.AddPriorityClass(pc)
	}
	for name, u := range c.Usage {
		node, found := sc.Nodes[name]
		if !found {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, u.Time)
		if err != nil {
			return nil, errorOf{"object", fmt.Errorf("usage of node %s: %v", name, err)}
		}
		node.ResourceUsage = &api.NodeUsage{MetricsTime: at, CPUUsageAvg: u.CPU, MEMUsageAvg: u.Memory}
	}
	var warnings []string
	for _, raw := range c.Objects {
		warning, err := fillObject(sc, raw)
		if err != nil {
			return nil, err
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return warnings, nil
}

func fillObject(sc *cache.SchedulerCache, raw json.RawMessage) (string, error) {
	var head metav1.TypeMeta
	if err := json.Unmarshal(raw, &head); err != nil {
		return "", errorOf{"object", err}
	}
	ctx, client := context.Background(), sc.Client()
	create := metav1.CreateOptions{}
	var err error
	switch head.Kind {
	case "ResourceQuota":
		var obj *v1.ResourceQuota
		if obj, err = decode[v1.ResourceQuota](raw, "resource quota"); err == nil {
			sc.AddResourceQuota(obj)
		}
	case "Numatopology":
		var obj *nodeinfov1alpha1.Numatopology
		if obj, err = decode[nodeinfov1alpha1.Numatopology](raw, "numatopology"); err == nil {
			sc.AddNumaInfoV1alpha1(obj)
		}
	case "PodDisruptionBudget":
		var obj *policyv1.PodDisruptionBudget
		if obj, err = decode[policyv1.PodDisruptionBudget](raw, "pod disruption budget"); err == nil {
			_, err = client.PolicyV1().PodDisruptionBudgets(obj.Namespace).Create(ctx, obj, create)
		}
	case "PersistentVolume":
		var obj *v1.PersistentVolume
		if obj, err = decode[v1.PersistentVolume](raw, "persistent volume"); err == nil {
			_, err = client.CoreV1().PersistentVolumes().Create(ctx, obj, create)
		}
	case "PersistentVolumeClaim":
		var obj *v1.PersistentVolumeClaim
		if obj, err = decode[v1.PersistentVolumeClaim](raw, "persistent volume claim"); err == nil {
			_, err = client.CoreV1().PersistentVolumeClaims(obj.Namespace).Create(ctx, obj, create)
		}
	case "StorageClass":
		var obj *storagev1.StorageClass
		if obj, err = decode[storagev1.StorageClass](raw, "storage class"); err == nil {
			_, err = client.StorageV1().StorageClasses().Create(ctx, obj, create)
		}
	case "Namespace":
		var obj *v1.Namespace
		if obj, err = decode[v1.Namespace](raw, "namespace"); err == nil {
			_, err = client.CoreV1().Namespaces().Create(ctx, obj, create)
		}
	default:
		return fmt.Sprintf("%s %s is not given to the real engine's cache", head.APIVersion, head.Kind), nil
	}
	if err != nil {
		return "", errorOf{"object", fmt.Errorf("%s: %v", head.Kind, err)}
	}
	return "", nil
}

// carryOutBinds takes the binds the session queues, as the cache's bind goroutine does
// with a binder that always succeeds, until stop is closed: the queue holds 5,000, and
// a session that binds more waits for room.
func carryOutBinds(sc *cache.SchedulerCache, fx *effects, stop <-chan struct{}) {
	for {
		select {
		case <-sc.BindFlowChannel:
			fx.mu.Lock()
			fx.bound++
			fx.mu.Unlock()
		case <-stop:
			return
		}
	}
}

// settle waits until the cache's goroutines have carried out the binds and evictions
// the session dispatched.
func settle(fx *effects) error {
	deadline := realNow().Add(30 * time.Second)
	for !fx.settled() {
		if realNow().After(deadline) {
			return fmt.Errorf("the cache did not carry out the session's binds and evictions in 30 s")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func conditions(pg *api.PodGroup) []Condition {
	out := []Condition{}
	for _, c := range pg.Status.Conditions {
		cond := Condition{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, TransitionID: c.TransitionID,
		}
		if !c.LastTransitionTime.IsZero() {
			cond.LastTransitionTime = c.LastTransitionTime.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, cond)
	}
	return out
}

func taskKey(t *api.TaskInfo) string { return t.Namespace + "/" + t.Name }

// prepared is a request's scheduler cache, filled and started, ready for a session.
type prepared struct {
	actions        []framework.Action
	tiers          []conf.Tier
	configurations []conf.Configuration
	sc             *cache.SchedulerCache
	fx             *effects
	client         kubernetes.Interface
	objects        *served
	warnings       []string
	// informed says the cache's informers run (and its goroutine carries out binds).
	informed bool
	// stop ends the cache's goroutines or the program's bind taker.
	stop func()
}

// prepare reads the request's conf and fills a scheduler cache with its cluster, as
// vc-scheduler's cache would hold it when a session opens.
func prepare(req *Request, logs *capture, setVerbosity func(int)) (*prepared, error) {
	if req.Fresh { // a new scheduler: before its conf picks the actions
		resetScheduler()
	}
	actions, tiers, configurations, err := loadConf(req.Conf)
	if err != nil {
		return nil, err
	}
	if req.Now != "" {
		at, err := time.Parse(time.RFC3339Nano, req.Now)
		if err != nil {
			return nil, errorOf{"request", fmt.Errorf("now: %v", err)}
		}
		setClock(at)
	}
	setOptions(req.Options)
	setVerbosity(req.Verbosity)
	if req.Reseed { // a fresh scheduler's first session
		rand.Seed(req.Seed) //nolint:staticcheck // the spec's seed drives Volcano's tie-breaks
		startScheduler()
	}

	fx := newEffects()
	name := "volcano"
	if len(req.Options.SchedulerNames) > 0 {
		name = req.Options.SchedulerNames[0]
	}
	sc := cache.NewCustomMockSchedulerCache(name, binder{fx}, evictor{fx}, statusUpdater{fx}, nil, nil, recorder{fx})
	objects, err := decodeServed(req.Cluster)
	if err != nil {
		return nil, err
	}
	client, err := objects.client()
	if err != nil {
		return nil, err
	}
	warnings, err := fill(sc, req.Cluster, objects)
	if err != nil {
		return nil, err
	}
	allocateNuma(sc)
	// The cache's informers serve only the kinds a spec gives as objects (PDBs,
	// volumes, namespaces); starting them costs a 100 ms sync poll, so a cluster
	// without such objects leaves them stopped and their listers empty, as they would
	// be. Binds are then carried out here, not by the cache's bind goroutine.
	p := &prepared{
		actions: actions, tiers: tiers, configurations: configurations, sc: sc, fx: fx,
		client: client, objects: objects, warnings: warnings,
		informed: len(req.Cluster.Objects) > 0,
	}
	stop := make(chan struct{})
	p.stop = func() {
		close(stop)
		shutDownQueues(sc)
	}
	if p.informed {
		sc.Run(stop)
	} else {
		go carryOutBinds(sc, fx, stop)
	}
	logs.take() // the cache's start-up lines are not the session's
	return p, nil
}

// runSession is one runOnce of vc-scheduler on the request's cluster.
func runSession(req *Request, logs *capture, setVerbosity func(int)) (*Response, error) {
	started := cpuSeconds()
	p, err := prepare(req, logs, setVerbosity)
	if err != nil {
		return nil, err
	}
	prepared := cpuSeconds()
	defer p.stop()
	actions, sc, fx, warnings := p.actions, p.sc, p.fx, p.warnings

	conf.EnabledActionMap = make(map[string]bool, len(actions))
	for _, action := range actions {
		conf.EnabledActionMap[action.Name()] = true
	}
	klog.V(4).Infof("Start scheduling ...")
	ssn := framework.OpenSession(recordingCache{sc, fx, p.client}, p.tiers, p.configurations)
	jobs := ssn.Jobs // CloseSession forgets them
	for _, action := range actions {
		action.Initialize()
		action.Execute(ssn)
		action.UnInitialize()
	}
	resp := &Response{
		ID: req.ID, Binds: []Bind{}, Evictions: []Eviction{}, Events: []Event{},
		PodGroups: map[string]PodGroupResult{}, Tasks: map[string]TaskResult{},
		Pipelined: map[string][]TaskOnNode{}, Warnings: warnings,
	}
	if req.Capture {
		// Every pod as Volcano reads its status from the pod (NewTaskInfo); the session's
		// own tasks, below, override those of its jobs.
		for _, pod := range p.objects.pods {
			task := api.NewTaskInfo(pod)
			resp.Tasks[pod.Namespace+"/"+pod.Name] = TaskResult{Node: pod.Spec.NodeName, Status: task.Status.String()}
		}
	}
	sessionPhases := map[string]string{}
	for uid, job := range jobs {
		if job.PodGroup != nil {
			sessionPhases[string(uid)] = string(job.PodGroup.Status.Phase)
		}
		if !req.Capture {
			continue
		}
		for _, task := range job.Tasks {
			node := ""
			if task.Status != api.Pending && task.Status != api.Allocated && task.Status != api.Pipelined {
				node = task.NodeName
			}
			resp.Tasks[taskKey(task)] = TaskResult{Node: node, Status: task.Status.String()}
		}
		pipelined := []TaskOnNode{}
		for _, task := range job.TaskStatusIndex[api.Pipelined] {
			pipelined = append(pipelined, TaskOnNode{Task: taskKey(task), Node: task.NodeName})
		}
		sort.Slice(pipelined, func(i, j int) bool { return pipelined[i].Task < pipelined[j].Task })
		resp.Pipelined[string(uid)] = pipelined
	}
	framework.CloseSession(ssn)
	klog.V(4).Infof("End scheduling ...")
	if err := settle(fx); err != nil {
		return nil, err
	}
	closed := cpuSeconds()
	fx.mu.Lock()
	for uid, job := range jobs {
		if job.PodGroup == nil {
			continue
		}
		status := job.PodGroup.Status
		_, written := fx.podGroups[string(uid)]
		resp.PodGroups[string(uid)] = PodGroupResult{
			SessionPhase: sessionPhases[string(uid)], Phase: string(status.Phase),
			Conditions: conditions(job.PodGroup),
			Running:    status.Running, Succeeded: status.Succeeded, Failed: status.Failed,
			Written: written,
		}
	}
	resp.Binds = append(resp.Binds, fx.binds...)
	resp.Evictions = append(resp.Evictions, fx.evictions...)
	resp.Events = append(resp.Events, fx.events...)
	fx.mu.Unlock()
	resp.Patched = p.objects.patched(p.client)
	resp.Logs = logs.take()
	resp.Cost = &Cost{Prepare: prepared - started, Session: closed - prepared, Answer: cpuSeconds() - closed}
	return resp, nil
}
