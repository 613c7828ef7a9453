package main

import (
	"reflect"
	"time"
	"unsafe"

	"volcano.sh/volcano/pkg/scheduler/actions/allocate"
	"volcano.sh/volcano/pkg/scheduler/actions/backfill"
	"volcano.sh/volcano/pkg/scheduler/actions/enqueue"
	"volcano.sh/volcano/pkg/scheduler/actions/preempt"
	"volcano.sh/volcano/pkg/scheduler/actions/reclaim"
	"volcano.sh/volcano/pkg/scheduler/actions/shuffle"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/api/devices/nvidia/gpushare"
	"volcano.sh/volcano/pkg/scheduler/api/devices/nvidia/vgpu"
	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

// A released Volcano keeps, beside what the program sets on each request (the clock,
// the options, the verbosity, the random generator), package-level state that lives as
// long as the vc-scheduler process. resetScheduler puts back what a fresh process
// holds, so that one process serves spec after spec as a new scheduler each time
// (Volcano v1.10 and v1.11; a fork's tree, which may keep more, gets a process of its
// own per spec instead, see VolcanoEngine.reusable).

// nodeRotation is where PredicateNodes starts its next pass over the nodes.
//
//go:linkname nodeRotation volcano.sh/volcano/pkg/scheduler/util.lastProcessedNodeIndex
var nodeRotation int

// tdmLastEvict is when tdm last evicted from a revocable node; it waits its interval
// after that.
//
//go:linkname tdmLastEvict volcano.sh/volcano/pkg/scheduler/plugins/tdm.lastEvictAt
var tdmLastEvict time.Time

// resetScheduler is a new vc-scheduler's package-level state: node rotation from the
// first node, no tdm eviction yet, deviceshare's switches off until a conf's arguments
// turn them on (deviceshare sets them only from the arguments it is given), and the
// actions as their constructors make them (each keeps the arguments of the last conf
// that set them, enablePredicateErrorCache among them).
func resetScheduler() {
	nodeRotation = 0
	numaAllocated = map[string]api.ResNumaSets{}
	tdmLastEvict = time.Time{}
	gpushare.GpuSharingEnable, gpushare.GpuNumberEnable, gpushare.NodeLockEnable = false, false, false
	vgpu.VGPUEnable, vgpu.NodeLockEnable = false, false
	for _, action := range []framework.Action{
		reclaim.New(), allocate.New(), backfill.New(), preempt.New(), enqueue.New(), shuffle.New(),
	} {
		framework.RegisterAction(action)
	}
}

// shutDownQueues ends the work queues a scheduler cache makes (its error tasks, node
// and deleted-jobs queues). Each queue runs a goroutine until it is shut down, and
// vc-scheduler makes one cache for its life, so Volcano never shuts them: here, where
// each request makes a cache, they would pile up by three a spec. The fields are
// unexported, so they are found by reflection, by what they can do.
func shutDownQueues(sc *cache.SchedulerCache) {
	fields := reflect.ValueOf(sc).Elem()
	for i := 0; i < fields.NumField(); i++ {
		field := fields.Field(i)
		if field.Kind() != reflect.Interface || field.IsNil() {
			continue
		}
		value := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().Interface()
		if queue, ok := value.(interface{ ShutDown() }); ok {
			queue.ShutDown()
		}
	}
}
