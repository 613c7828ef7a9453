package main

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
)

// effects is what a session did to the world outside the scheduler: the calls its
// cache made to the binder, the evictor, the status updater and the event recorder.
// The cache makes some of them from goroutines of its own.
type effects struct {
	mu sync.Mutex
	// dispatched binds and evictions, in the order the session made them
	binds     []Bind
	evictions []Eviction
	// how many of them the cache's goroutines have carried out
	bound, evicted int
	podGroups      map[string]*api.PodGroup
	events         []Event
}

func newEffects() *effects {
	return &effects{podGroups: map[string]*api.PodGroup{}}
}

// settled reports whether the cache has carried out every bind and eviction dispatched.
func (e *effects) settled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bound >= len(e.binds) && e.evicted >= len(e.evictions)
}

// recordingCache is the scheduler cache as the session sees it, noting each bind and
// eviction in the order the session dispatches them: the cache carries them out from
// goroutines, one per bind batch, in no fixed order.
type recordingCache struct {
	*cache.SchedulerCache
	fx     *effects
	client kubernetes.Interface
}

// Client is the session's API client: one serving the cluster's nodes and pods, which
// deviceshare patches (a GPU index, a vGPU slice) and reads back. It is not the client
// the cache's informers watch, so a patch does not feed the cache a second copy.
func (c recordingCache) Client() kubernetes.Interface { return c.client }

func (c recordingCache) AddBindTask(task *api.TaskInfo) error {
	err := c.SchedulerCache.AddBindTask(task)
	if err == nil {
		c.fx.mu.Lock()
		c.fx.binds = append(c.fx.binds, Bind{Task: task.Namespace + "/" + task.Name, Node: task.NodeName})
		c.fx.mu.Unlock()
	}
	return err
}

func (c recordingCache) Evict(task *api.TaskInfo, reason string) error {
	err := c.SchedulerCache.Evict(task, reason)
	if err == nil {
		c.fx.mu.Lock()
		c.fx.evictions = append(c.fx.evictions, Eviction{Task: task.Namespace + "/" + task.Name, Reason: reason})
		c.fx.mu.Unlock()
	}
	return err
}

// binder counts the binds the cache carries out (FakeBinder's part: every one succeeds).
type binder struct{ fx *effects }

func (b binder) Bind(_ kubernetes.Interface, tasks []*api.TaskInfo) map[api.TaskID]string {
	b.fx.mu.Lock()
	defer b.fx.mu.Unlock()
	b.fx.bound += len(tasks)
	return nil
}

// evictor counts the evictions the cache carries out.
type evictor struct{ fx *effects }

func (e evictor) Evict(*v1.Pod, string) error {
	e.fx.mu.Lock()
	defer e.fx.mu.Unlock()
	e.fx.evicted++
	return nil
}

// statusUpdater records the pod groups the job updater writes and returns them, as the
// API server would: Volcano's FakeStatusUpdater returns nil, and the cache then drops
// the status CloseSession wrote.
type statusUpdater struct{ fx *effects }

func (s statusUpdater) UpdatePodStatus(pod *v1.Pod) (*v1.Pod, error) { return pod, nil }

func (s statusUpdater) UpdatePodGroup(pg *api.PodGroup) (*api.PodGroup, error) {
	s.fx.mu.Lock()
	defer s.fx.mu.Unlock()
	s.fx.podGroups[pg.Namespace+"/"+pg.Name] = pg.Clone()
	return pg, nil
}

func (s statusUpdater) UpdateQueueStatus(*api.QueueInfo) error { return nil }

// recorder keeps every event and never blocks (record.FakeRecorder blocks after its
// buffer fills).
type recorder struct{ fx *effects }

func (r recorder) Event(object runtime.Object, eventtype, reason, message string) {
	kind, key := describe(object)
	r.fx.mu.Lock()
	defer r.fx.mu.Unlock()
	r.fx.events = append(r.fx.events, Event{Kind: kind, Object: key, Type: eventtype, Reason: reason, Message: message})
}

func (r recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r recorder) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	r.Eventf(object, eventtype, reason, messageFmt, args...)
}

func describe(object runtime.Object) (kind, key string) {
	kind = fmt.Sprintf("%T", object)
	if accessor, err := meta.Accessor(object); err == nil {
		key = accessor.GetName()
		if ns := accessor.GetNamespace(); ns != "" {
			key = ns + "/" + key
		}
	}
	return kind, key
}
