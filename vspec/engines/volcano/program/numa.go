package main

import (
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
)

// numaAllocated is what numa-aware's OnSessionClose took from the scheduler cache's
// nodes (UpdateSchedulerNumaInfo) over the scheduler's lifetime, per node. vc-scheduler's
// cache keeps those CPUs allocated from session to session (until the node's
// Numatopology changes); this program fills a new cache for each session, so it takes
// them again after filling it, as vspec's engine does.
var numaAllocated = map[string]api.ResNumaSets{}

// UpdateSchedulerNumaInfo records the allocation, then makes it in the session's cache.
func (c recordingCache) UpdateSchedulerNumaInfo(sets map[string]api.ResNumaSets) error {
	for node, taken := range sets {
		kept := numaAllocated[node]
		if kept == nil {
			kept = api.ResNumaSets{}
			numaAllocated[node] = kept
		}
		for name, cpus := range taken {
			kept[name] = kept[name].Union(cpus)
		}
	}
	return c.SchedulerCache.UpdateSchedulerNumaInfo(sets)
}

// allocateNuma takes the CPUs allocated in earlier sessions from a freshly filled cache:
// a long-lived cache made each node's scheduler view from its Numatopology at the first
// snapshot (RefreshNumaSchedulerInfoByCrd, which then resets the change flag, so later
// snapshots keep the view) and took those CPUs from that view.
func allocateNuma(sc *cache.SchedulerCache) {
	for name, sets := range numaAllocated {
		node := sc.Nodes[name]
		if node == nil || node.NumaInfo == nil {
			continue
		}
		node.RefreshNumaSchedulerInfoByCrd()
		node.NumaSchedulerInfo.Allocate(sets)
	}
}
