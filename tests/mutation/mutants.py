"""Engine mutants: plausible one-line bugs, kept apart from the project's code.

Each mutant replaces one exact snippet of one engine file (the snippet must occur exactly
once, so a refactor that moves the code shows up as a stale mutant rather than as a
silent no-op). ``run.py`` applies them one at a time to a copy of the package and asks
``vspec fuzz`` to find a violated invariant or a crash.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository root
    old: str
    new: str
    why: str  # the plausible bug it stands for
    # The fuzz space run.py uses for it (unless --space is given): the eviction mutants
    # need the preempt and reclaim spaces, whose clusters make Volcano evict; the score,
    # node filter and priority order mutants the placement space, where best-score, liveness
    # and the order invariants judge most examples.
    space: str = "mixed"


MUTANTS: tuple[Mutant, ...] = (
    # -- gang ---------------------------------------------------------------------------------
    Mutant(
        "gang-evict-below-min",
        "vspec/plugins/gang.py",
        "if occupied[job.uid] > job.min_available:",
        "if occupied[job.uid] >= job.min_available:",
        "a victim's job may drop below minMember",
        space="preempt",
    ),
    Mutant(
        "gang-valid-off-by-one",
        "vspec/plugins/gang.py",
        "if valid < job.min_available:",
        "if valid <= job.min_available:",
        "a job with exactly minMember valid tasks is invalid",
    ),
    Mutant(
        "gang-order-reversed",
        "vspec/plugins/gang.py",
        "return 1 if l_ready else -1",
        "return -1 if l_ready else 1",
        "ready jobs are ordered before unready ones",
    ),
    Mutant(
        "job-ready-strict",
        "vspec/api/job_info.py",
        "return self.ready + self.pending_best_effort >= self.min_available",
        "return self.ready + self.pending_best_effort > self.min_available",
        "a gang with exactly minMember placed tasks is not ready",
    ),
    Mutant(
        "job-ready-no-best-effort",
        "vspec/api/job_info.py",
        "return self.ready + self.pending_best_effort >= self.min_available",
        "return self.ready + 1 >= self.min_available",
        "gang readiness counts one task too many",
    ),
    # -- proportion ---------------------------------------------------------------------------
    Mutant(
        "proportion-allocatable-ignores-task",
        "vspec/plugins/proportion.py",
        "future_used = attr.allocated.clone().add(candidate.resreq)",
        "future_used = attr.allocated.clone()",
        "a queue's allocatable forgets the candidate's request",
    ),
    Mutant(
        "proportion-overused-inverted",
        "vspec/plugins/proportion.py",
        "overused = attr.deserved.less_equal(attr.allocated, ZERO)",
        "overused = attr.allocated.less_equal(attr.deserved, ZERO)",
        "queues under their deserved share are skipped",
    ),
    Mutant(
        "proportion-reclaim-below-deserved",
        "vspec/plugins/proportion.py",
        "if not allocated.less_equal(attr.deserved, ZERO):",
        "if allocated.less_equal(attr.deserved, ZERO):",
        "reclaim takes from queues at or below their deserved share",
        space="reclaim",
    ),
    Mutant(
        "proportion-deserved-past-capability",
        "vspec/plugins/proportion.py",
        "attr.deserved.min_dimension_resource(attr.real_capability, INFINITY)",
        "pass",
        "deserved is not capped by the queue's capability",
    ),
    # -- drf ----------------------------------------------------------------------------------
    Mutant(
        "drf-job-order-reversed",
        "vspec/plugins/drf.py",
        "return -1 if lshare < rshare else 1",
        "return 1 if lshare < rshare else -1",
        "jobs with the larger dominant share go first",
    ),
    Mutant(
        "drf-preempt-share-inverted",
        "vspec/plugins/drf.py",
        "if ls < rs or math.fabs(ls - rs) <= SHARE_DELTA:",
        "if ls > rs or math.fabs(ls - rs) <= SHARE_DELTA:",
        "drf lets a job preempt one with a smaller share",
        space="preempt",
    ),
    # -- priority -----------------------------------------------------------------------------
    Mutant(
        "priority-preempt-equal",
        "vspec/plugins/priority.py",
        "if theirs < ours:",
        "if theirs <= ours:",
        "equal priorities may preempt each other",
        space="preempt",
    ),
    Mutant(
        "priority-job-order-ascending",
        "vspec/plugins/priority.py",
        "            return _descending(left.priority, right.priority)\n\n        def preemptable(",
        "            return _descending(right.priority, left.priority)\n\n        def preemptable(",
        "lower-priority jobs are ordered first",
        space="placement",
    ),
    Mutant(
        "priority-task-order-ascending",
        "vspec/plugins/priority.py",
        "            return _descending(left.priority, right.priority)\n\n        def job_order(",
        "            return _descending(right.priority, left.priority)\n\n        def job_order(",
        "lower-priority tasks are ordered first",
        space="placement",
    ),
    # -- predicates ---------------------------------------------------------------------------
    Mutant(
        "toleration-exists-ignores-key",
        "vspec/k8s/filters.py",
        "    if toleration.key and toleration.key != taint.key:\n        return False\n",
        "    if toleration.key and toleration.key != taint.key"
        " and toleration.operator != 'Exists':\n"
        "        return False\n",
        "an Exists toleration tolerates every key",
        space="placement",
    ),
    Mutant(
        "taint-noexecute-ignored",
        "vspec/k8s/filters.py",
        "taint = find_untolerated_taint(node.taints, tolerations, _DO_NOT_SCHEDULE_EFFECTS)",
        'taint = find_untolerated_taint(node.taints, tolerations, ("NoSchedule",))',
        "NoExecute taints do not repel pods",
        space="placement",
    ),
    Mutant(
        "selector-notin-inverted",
        "vspec/k8s/labels.py",
        "return labels.get(key) not in values",
        "return key in labels and labels.get(key) not in values",
        "NotIn requires the label to exist",
        space="placement",
    ),
    Mutant(
        "pod-count-off-by-one",
        "vspec/plugins/predicates.py",
        "if node.allocatable.max_task_num <= pods:",
        "if node.allocatable.max_task_num < pods:",
        "a node takes one pod more than its pod limit",
    ),
    Mutant(
        "unschedulable-ignored",
        "vspec/k8s/filters.py",
        "if not node.unschedulable or tolerations_tolerate(tolerations, _UNSCHEDULABLE_TAINT):",
        "if True:",
        "cordoned nodes receive pods",
    ),
    # -- scores -------------------------------------------------------------------------------
    Mutant(
        "binpack-ignores-used",
        "vspec/plugins/binpack.py",
        "used_finally = request + node_used",
        "used_finally = request",
        "binpack scores ignore what the node already holds",
        space="placement",
    ),
    Mutant(
        "leastrequested-inverted",
        "vspec/k8s/scores.py",
        "return (capacity - requested) * MAX_NODE_SCORE // capacity",
        "return requested * MAX_NODE_SCORE // capacity",
        "least-requested prefers the fullest node",
        space="placement",
    ),
    # -- allocate -----------------------------------------------------------------------------
    Mutant(
        "allocate-commits-pipelined",
        "vspec/actions/allocate.py",
        "        if ssn.job_ready(job):\n            stmt.commit()",
        "        if ssn.job_pipelined(job):\n            stmt.commit()",
        "allocate commits a gang that is only pipelined",
    ),
    Mutant(
        "allocate-binds-on-future-idle",
        "vspec/actions/allocate.py",
        '        if task.init_resreq.less_equal(node.idle, ZERO):\n            log.v(3, f"Binding',
        "        if task.init_resreq.less_equal(node.future_idle_view(), ZERO):\n"
        '            log.v(3, f"Binding',
        "allocate binds onto resources that are still being released",
    ),
    Mutant(
        "allocate-skips-after-first-failure",
        "vspec/actions/allocate.py",
        "                if job.need_continue_allocating():\n"
        "                    continue\n"
        "                break",
        "                break",
        "one unplaceable task ends the job's turn",
    ),
    Mutant(
        "allocate-ignores-job-order",
        "vspec/actions/allocate.py",
        "        queues.push(ssn.queues[job.queue])",
        "        queues.push(ssn.queues[job.queue])\n"
        "        jobs_map[job.queue] = PriorityQueue(lambda l, r: l.uid > r.uid)",
        "allocate orders jobs by name instead of JobOrder",
    ),
    # -- backfill -----------------------------------------------------------------------------
    Mutant(
        "backfill-takes-non-best-effort",
        "vspec/actions/backfill.py",
        "if task.best_effort and not task.sch_gated:",
        "if not task.sch_gated:",
        "backfill places tasks that request resources, without a resource check",
    ),
    Mutant(
        "backfill-pending-jobs",
        "vspec/actions/backfill.py",
        "            if job.is_pending():\n"
        "                continue\n"
        '            if not job_valid_for(ssn, job, "backfill")',
        '            if not job_valid_for(ssn, job, "backfill")',
        "backfill places pods of jobs that are not enqueued",
    ),
    # -- preempt ------------------------------------------------------------------------------
    Mutant(
        "preempt-best-effort-evicts-all",
        "vspec/actions/preempt.py",
        "    if preemptor.best_effort and not task.best_effort:\n        return False\n",
        "",
        "a best-effort preemptor evicts pods that request resources",
        space="preempt",
    ),
    Mutant(
        "preempt-other-queues",
        "vspec/actions/preempt.py",
        "return victim_job.queue == job.queue and task.job != preemptor.job",
        "return task.job != preemptor.job",
        "preempt takes victims from other queues",
        space="preempt",
    ),
    Mutant(
        "preempt-pipelines-without-fit",
        "vspec/actions/preempt.py",
        "        if not fits():\n            # Quirk kept",
        "        if False:\n            # Quirk kept",
        "the preemptor is pipelined even when the victims did not make room",
        space="preempt",
    ),
    Mutant(
        "preempt-keeps-unpipelined-statement",
        "vspec/actions/preempt.py",
        "            if not ssn.job_pipelined(job):\n"
        "                stmt.discard()\n"
        "                continue",
        "            if False:\n                stmt.discard()\n                continue",
        "evictions for a job that stays starving are committed",
        space="preempt",
    ),
    # -- reclaim ------------------------------------------------------------------------------
    Mutant(
        "reclaim-same-queue",
        "vspec/actions/reclaim.py",
        "if victim_job is None or victim_job.queue == job.queue:",
        "if victim_job is None:",
        "reclaim evicts tasks of the reclaimer's own queue",
        space="reclaim",
    ),
    Mutant(
        "reclaim-ignores-reclaimable",
        "vspec/actions/reclaim.py",
        "if ssn.queues[victim_job.queue].reclaimable():",
        "if True:",
        "reclaim takes from queues marked reclaimable: false",
        space="reclaim",
    ),
    Mutant(
        "reclaim-evicts-everything",
        "vspec/actions/reclaim.py",
        "            if task.init_resreq.less_equal(reclaimed, ZERO):\n                break",
        "            if False:\n                break",
        "reclaim evicts every victim, not only until the request is covered",
        space="reclaim",
    ),
    # -- statement ----------------------------------------------------------------------------
    Mutant(
        "statement-discard-keeps-evictions",
        "vspec/framework/statement.py",
        "            if op.name is Op.EVICT:\n                self._unevict(op.task)",
        "            if op.name is Op.EVICT:\n"
        "                self.ssn.cache.evict(op.task, op.reason)",
        "a discarded statement's evictions still happen",
        space="preempt",
    ),
    Mutant(
        "statement-allocate-no-node-accounting",
        "vspec/framework/statement.py",
        '        node.add_task(task)\n        self._log_node("allocated", task, node)',
        '        self._log_node("allocated", task, node)',
        "a statement's allocation does not take the node's resources",
    ),
    # -- job updater --------------------------------------------------------------------------
    Mutant(
        "job-phase-strict-min",
        "vspec/framework/job_updater.py",
        "if allocated >= pg.min_member:",
        "if allocated > pg.min_member:",
        "a gang with exactly minMember bound pods stays Inqueue",
    ),
    Mutant(
        "job-phase-completed-swapped",
        "vspec/framework/job_updater.py",
        'return "Completed" if done == allocated else "Running"',
        'return "Running" if done == allocated else "Completed"',
        "running jobs are reported Completed",
    ),
)


# Mutants of the plugins beyond the core, which the `plugins` space reaches: run with
# ``run.py --plugins`` (or by name), and counted apart from the core ones above so that
# the core figure stays comparable from change to change.
PLUGIN_MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "numa-restricted-admits-all",
        "vspec/plugins/numaaware.py",
        'admit = True if policy == "best-effort" else best.preferred',
        "admit = True",
        "restricted and single-numa-node admit a pod with no preferred NUMA hint",
        space="plugins",
    ),
    Mutant(
        "task-topology-order-reversed",
        "vspec/plugins/task_topology.py",
        "            return 1 if lo > ro else -1\n",
        "            return -1 if lo > ro else 1\n",
        "the roles of a task-topology order are placed last first",
        space="plugins",
    ),
    Mutant(
        "tdm-victims-ignore-preemptable",
        "vspec/plugins/tdm.py",
        "if not task.preemptable or task.status is not TaskStatus.Running:",
        "if task.status is not TaskStatus.Running:",
        "tdm offers pods marked preemptable: false as victims",
        space="plugins",
    ),
    Mutant(
        "resourcequota-at-hard-limit",
        "vspec/plugins/resourcequota.py",
        "usage[name] > limit",
        "usage[name] >= limit",
        "a job that brings its namespace exactly to its quota is not enqueued",
        space="plugins",
    ),
    Mutant(
        "pdb-budget-off-by-one",
        "vspec/plugins/pdb.py",
        "if allowed[i] < 0:",
        "if allowed[i] <= 0:",
        "a budget vetoes the last disruption it allows",
        space="plugins",
    ),
    Mutant(
        "nodeorder-least-weight-misread",
        "vspec/plugins/nodeorder.py",
        "w.least_requested = LEAST_REQUESTED_WEIGHT_ARG.read(args)",
        "w.least_requested = MOST_REQUESTED_WEIGHT_ARG.read(args)",
        "leastrequested's weight is read from mostrequested.weight",
        space="plugins",
    ),
)
