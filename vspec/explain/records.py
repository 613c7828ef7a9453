"""What ``vspec explain`` says about a task: plain dataclasses that are also its JSON.

``vspec explain --format json`` prints :class:`Explanation` through
:func:`dataclasses.asdict`, so the field names and nesting here are the documented
contract (docs/explain.md, format ``vspec-explain/1``): fields may be added, none is
renamed or removed without a new format version.

Resource amounts are in the units a user writes: cpu in cores, memory and storage in
bytes, other resources in their own unit (GPUs in cards).
"""

from __future__ import annotations

from dataclasses import dataclass, field

FORMAT = "vspec-explain/1"

ResourceAmounts = dict[str, float]


@dataclass
class Check:
    """One predicate verdict on one node: a plugin's, or the action's own check (its
    ``plugin`` is then the action's name in parentheses, e.g. ``(allocate)``: the
    resource fit against the node's future idle, or a verdict the action reused from
    its per-role error cache when the plugin that gave it is not known)."""

    plugin: str
    passed: bool
    code: str = ""  # the Volcano status code when it failed: Unschedulable, Error...
    reasons: list[str] = field(default_factory=list)
    cached: bool = False  # reused from an earlier task of the role, not asked again


@dataclass
class NodeVerdict:
    """One node as the action saw it for the task: predicates in call order (a plugin
    after the first failure is never asked), then scores when it was scored."""

    node: str
    fits: bool
    checks: list[Check] = field(default_factory=list)
    scores: dict[str, float] = field(
        default_factory=dict
    )  # plugin -> its score ("<plugin>/batch": its BatchNodeOrder)
    total: float | None = None  # what PrioritizeNodes summed; None: not scored


@dataclass
class Vote:
    """A plugin's answer to one session question (job ready, queue overused...)."""

    plugin: str
    tier: int  # 1-based tier of the scheduler conf
    vote: str  # permit | abstain | reject | yes | no | pass | fail: <reason>
    question: str = ""  # what was asked, where a list mixes questions (queue_votes)


@dataclass
class VictimVote:
    plugin: str
    tier: int
    vote: str  # permit | abstain
    victims: list[str] = field(default_factory=list)  # the tasks it would let go


@dataclass
class VictimSearch:
    """Preempt or reclaim on one node: the candidates, each plugin's vote per tier, the
    victims the tiers agreed on, and why they did not make room (``error``)."""

    node: str
    candidates: list[str] = field(default_factory=list)
    votes: list[VictimVote] = field(default_factory=list)
    victims: list[str] = field(default_factory=list)
    error: str | None = None
    # the victims evicted for the task, one by one until it fit (often fewer than
    # ``victims``, which the plugins only permitted)
    evicted: list[str] = field(default_factory=list)


@dataclass
class Attempt:
    """One try of one action to place the task."""

    cycle: int
    action: str
    queue_votes: list[Vote] = field(default_factory=list)  # allocatable / preemptive
    nodes: list[NodeVerdict] = field(default_factory=list)  # in the order examined
    not_examined: int = 0  # nodes left unexamined once enough fitted (Volcano's sampling)
    feasible: list[str] = field(default_factory=list)
    chosen: str | None = None
    tied: list[str] = field(default_factory=list)  # nodes with the chosen node's top score
    victims: list[VictimSearch] = field(default_factory=list)


@dataclass
class RoleCount:
    """A task role's gang arithmetic (``minAvailable`` per role of the PodGroup)."""

    role: str
    min_available: int
    ready: int
    pipelined: int
    pending: int


@dataclass
class Gang:
    """The task's job at the end of the cycle, before the session closed."""

    job: str
    phase: str
    min_available: int
    ready: int  # allocated, binding, bound, running or succeeded tasks
    pipelined: int
    pending: int
    valid: bool  # every role can still reach its minimum
    is_ready: bool
    is_pipelined: bool
    roles: list[RoleCount] = field(default_factory=list)
    votes: dict[str, list[Vote]] = field(default_factory=dict)  # question -> answers
    fit_error: str = ""  # what gang writes in the Unschedulable condition


@dataclass
class ResourceShare:
    resource: str
    deserved: float
    allocated: float
    capability: float | None  # None: unlimited
    real_capability: float | None
    guarantee: float
    request: float
    at_deserved: bool  # allocated >= deserved for this resource


@dataclass
class QueueState:
    """A queue as one quota plugin (proportion, capacity...) saw it at the end of the cycle."""

    queue: str
    plugin: str
    share: float
    resources: list[ResourceShare] = field(default_factory=list)
    overused: list[Vote] = field(default_factory=list)  # each plugin's Overused answer


@dataclass
class TaskExplanation:
    """Why a task ended one cycle where it did."""

    task: str
    job: str
    queue: str
    cycle: int
    status: str  # in the session after the last action
    node: str | None
    summary: str  # one sentence: the reason, as far as the records tell
    attempts: list[Attempt] = field(default_factory=list)
    gang: Gang | None = None
    queues: list[QueueState] = field(default_factory=list)


@dataclass
class RoomCheck:
    """What one plugin compared to decide enqueue: ``held`` plus the job's minResources
    against ``room``; ``short``: the dimensions the job asks for that did not fit."""

    plugin: str
    where: str
    room: ResourceAmounts
    held: ResourceAmounts
    short: list[str] = field(default_factory=list)


@dataclass
class JobExplanation:
    """A job (its pod group) in one cycle: the enqueue decision, and why its pods do or
    do not exist yet. Made for a job asked about, and for every job without pods."""

    job: str
    queue: str
    cycle: int
    phase: str  # in the session after the last action
    min_member: int
    min_resources: ResourceAmounts | None  # None: not set, and every plugin permits
    pods: int  # the job's pods in the session
    summary: str  # one sentence: why it is where it is
    held_pods: list[str] = field(default_factory=list)  # a Job's, not created yet
    enqueue: list[Vote] = field(default_factory=list)  # JobEnqueueable, empty: not asked
    rooms: list[RoomCheck] = field(default_factory=list)


@dataclass
class PodBar:
    """A task on a node, for the report's pictures."""

    task: str
    job: str
    status: str
    request: ResourceAmounts = field(default_factory=dict)


@dataclass
class NodeState:
    node: str
    allocatable: ResourceAmounts = field(default_factory=dict)
    pods: list[PodBar] = field(default_factory=list)


@dataclass
class ClusterState:
    """The cluster at the end of one cycle (the HTML report draws it)."""

    cycle: int
    nodes: list[NodeState] = field(default_factory=list)
    pending: dict[str, list[str]] = field(default_factory=dict)  # job -> its pending tasks
    queues: list[QueueState] = field(default_factory=list)
    # job -> its pod group's phase, for the jobs without pods (a Volcano Job's pods are
    # created once its PodGroup leaves Pending)
    podless: dict[str, str] = field(default_factory=dict)


@dataclass
class Explanation:
    """``vspec explain``'s answer for one spec."""

    spec: str
    file: str
    line: int
    seed: int
    cycles: int
    tasks: list[TaskExplanation] = field(default_factory=list)
    format: str = FORMAT
    jobs: list[JobExplanation] = field(default_factory=list)
    # Why the run stopped early (a plugin raised, Volcano would panic): the tasks are
    # then explained from the state the session was in at that moment.
    error: str | None = None
