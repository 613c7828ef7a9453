"""Volcano's job admission webhooks (pkg/webhooks/admission/jobs, v1.11.0) for a Job
being created in a ``deployed`` cluster: ``createPatch`` fills in its defaults, then
``validateJobCreate`` refuses it with the message ``kubectl`` would print.

The rules are Volcano's, in its order, each with its own text (quirks kept: the double
spaces of some messages, the multi-error layout of the policy checks). Where Go walks a
map (job plugins, the valid events and actions listed in a policy error) its order is
random; vspec uses the written order and the order of Volcano's declarations. Of
Kubernetes' own pod template validation (``ValidatePodTemplate``) the checks a Job's
author meets are modelled: containers, their names and images, requests above limits, the
restart policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vspec.errors import Location
from vspec.harness.deployment import ROOT_QUEUE, AdmissionRefused, queue_hint, queue_state_problem
from vspec.harness.manifests import resource_list
from vspec.model.conf import SchedulerOptions
from vspec.model.objects import Queue

if TYPE_CHECKING:
    from vspec.harness.vcjob_types import Job, Policy, Task

WEBHOOK = "validatejob.volcano.sh"
DEFAULT_QUEUE = "default"
DEFAULT_TASK_SPEC = "default"
DEFAULT_MAX_RETRY = 3  # mutate_job.go, DefaultMaxRetry and defaultMaxRetry
JOB_PLUGINS = ("env", "svc", "ssh", "tensorflow", "mpi", "pytorch")
# pkg/webhooks/admission/jobs/validate/util.go: policyEventMap and policyActionMap, the
# values allowed in a policy (the others are the controller's own).
POLICY_EVENTS = {
    "*": True,
    "PodFailed": True,
    "PodEvicted": True,
    "PodPending": True,
    "Unknown": True,
    "TaskCompleted": True,
    "TaskFailed": True,
    "JobUpdated": True,
    "OutOfSync": False,
    "CommandIssued": False,
    "PodRunning": False,
}
POLICY_ACTIONS = {
    "AbortJob": True,
    "RestartJob": True,
    "RestartTask": True,
    "RestartPod": True,
    "TerminateJob": True,
    "CompleteJob": True,
    "ResumeJob": True,
    "SyncJob": False,
    "EnqueueJob": False,
    "SyncQueue": False,
    "OpenQueue": False,
    "CloseQueue": False,
}
ANY_EVENT = "*"
RESTART_POLICIES = ("Always", "OnFailure", "Never")
NO_TOPOLOGY_POLICY = ("", "none")
MPI_MASTER, MPI_WORKER = "master", "worker"  # the mpi job plugin's default task names
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
_DNS1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", re.ASCII
)
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", re.ASCII)
_DNS_LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_DNS_SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_QUALIFIED_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


# -- mutate: jobs/mutate/mutate_job.go -------------------------------------------------------


def mutate(job: Job, options: SchedulerOptions) -> None:
    """``createPatch``: queue ``default``, the first scheduler name, a ``maxRetry`` of 0
    made 3 (the job's and each task's), unnamed tasks ``default<i>``, a task's
    minAvailable its replicas, a job minAvailable of 0 the sum of its tasks'. (The svc and
    ssh plugins it adds for mpi, tensorflow and pytorch are known plugins: no rule reads
    them.)"""
    if not job.queue:
        job.queue = DEFAULT_QUEUE
    if not job.scheduler_name:
        job.scheduler_name = options.scheduler_names[0]
    if job.max_retry == 0:
        job.max_retry = DEFAULT_MAX_RETRY
    for index, task in enumerate(job.tasks):
        if not task.name:
            task.name = f"{DEFAULT_TASK_SPEC}{index}"
        if task.min_available is None:
            task.min_available = task.replicas
    if job.min_available == 0:
        job.min_available = sum(t.min_available or 0 for t in job.tasks)


# -- validate: jobs/validate/admit_job.go ----------------------------------------------------


def validate(job: Job, queues: Mapping[str, Queue], location: Location | None) -> None:
    """``validateJobCreate``: the checks that end it at once, then every other rule,
    their messages joined as Volcano joins them."""
    first = _fatal(job)
    if first:
        _refuse(first, location)
    msg = ""
    for index, task in enumerate(job.tasks):
        problems, duplicated = _task_problems(job, task, index, {t.name for t in job.tasks[:index]})
        msg += problems
        if duplicated:
            break  # quirk kept: Go's loop breaks here, the tasks after it are not checked
    msg += _qualified("create job with name", job.meta.name, "")
    if sum(t.replicas for t in job.tasks) < job.min_available:
        msg += " job 'minAvailable' should not be greater than total replicas in tasks;"
    msg += policies_problem(job.policies, "spec.policies")
    msg += "".join(f" unable to find job plugin: {n};" for n in job.plugins if n not in JOB_PLUGINS)
    msg += volumes_problem(job.volumes)
    msg += job_queue_problem(job.queue, queues)
    if job.queue not in queues:
        msg += f" ({queue_hint(job.queue, queues)})"  # vspec's addition
    if any(t.depends_on is not None for t in job.tasks) and not is_dag(job.tasks):
        msg += (
            " job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);"
        )
    if msg:
        _refuse(msg, location)


def _fatal(job: Job) -> str:
    """The checks whose failure is the whole answer."""
    if job.min_available < 0:
        return "job 'minAvailable' must be >= 0."
    if job.max_retry < 0:
        return "'maxRetry' cannot be less than zero."
    if job.ttl_seconds_after_finished is not None and job.ttl_seconds_after_finished < 0:
        return "'ttlSecondsAfterFinished' cannot be less than zero."
    if not job.tasks:
        return "No task specified in job spec"
    if "mpi" in job.plugins:
        master, worker = mpi_task_names(job.plugins["mpi"])
        names = {t.name for t in job.tasks}
        if master not in names:
            return "The specified mpi master task was not found"
        if worker not in names:
            return "The specified mpi worker task was not found"
    return ""


def _task_problems(job: Job, task: Task, index: int, before: set[str]) -> tuple[str, bool]:
    """One task's complaints, and whether its name is a duplicate (which ends the loop)."""
    where = f"task: {task.name}, job: {job.meta.name};"
    msg = ""
    if task.replicas < 0:
        msg += f" 'replicas' < 0 in {where}"
    if task.min_available is not None:
        if task.min_available < 0:
            msg += f" 'minAvailable' < 0 in {where}"
        elif task.min_available > task.replicas:
            msg += f" 'minAvailable' is greater than 'replicas' in {where}"
    label = dns1123_label_errors(task.name)
    if label:
        msg += f" {_go_list(label)};"
    if task.name in before:
        return msg + f" duplicated task name {task.name};", True
    msg += policies_problem(task.policies, "spec.tasks.policies")
    pod_name = f"{job.meta.name}-{task.name}-{index}"
    msg += _qualified("create pod with name", pod_name, ";")
    msg += template_problem(task, index)
    return msg, False


def _qualified(what: str, name: str, end: str) -> str:
    """``validation.IsQualifiedName`` of a pod or job name, as Volcano words a failure."""
    errors = qualified_name_errors(name)
    return f"{what} {name} validate failed {_go_list(errors)}{end}" if errors else ""


def _go_list(items: Sequence[str]) -> str:
    """A Go ``[]string`` printed with ``%v``."""
    return f"[{' '.join(items)}]"


def mpi_task_names(arguments: Sequence[str]) -> tuple[str, str]:
    """The master and worker task names the mpi job plugin reads from its arguments
    (``--master=``, ``--worker=``; Go's flag package, which stops at the first argument
    that is not a flag and at an unknown one)."""
    found = {"master": MPI_MASTER, "worker": MPI_WORKER}
    args = list(arguments)
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-") or arg in ("-", "--"):
            break
        name, eq, value = arg.lstrip("-").partition("=")
        if name not in (*found, "port"):
            break  # flag: provided but not defined; parsing stops
        if not eq:
            if i + 1 >= len(args):
                break
            i += 1
            value = args[i]
        if name in found:
            found[name] = value
        i += 1
    return found["master"], found["worker"]


def policies_problem(policies: Sequence[Policy], field: str) -> str:
    """``validatePolicies`` (util.go) and the list of valid values Volcano appends."""
    errors = _policy_errors(policies, field)
    if not errors:
        return ""
    events = " ".join(e for e, allowed in POLICY_EVENTS.items() if allowed)
    actions = " ".join(a for a, allowed in POLICY_ACTIONS.items() if allowed)
    return _multierror(errors) + f" valid events are [{events}], valid actions are [{actions}];"


def _policy_errors(policies: Sequence[Policy], field: str) -> list[str]:
    errors: list[str] = []
    events: list[str] = []  # seen across the policies, in order
    exit_codes: set[int] = set()
    for policy in policies:
        has_event = bool(policy.event or policy.events)
        if has_event and policy.exit_code is not None:
            errors.append("must not specify event and exitCode simultaneously")
            break
        if not has_event and policy.exit_code is None:
            errors.append("either event and exitCode should be specified")
            break
        if has_event:
            problem = _event_problem(policy, events, field)
            if problem:
                errors.append(problem)
                break
        elif policy.exit_code == 0:
            errors.append("0 is not a valid error code")
            break
        elif policy.exit_code in exit_codes:
            errors.append(f"duplicate exitCode {policy.exit_code}")
            break
        elif policy.exit_code is not None:
            exit_codes.add(policy.exit_code)
    if ANY_EVENT in events and len(events) > 1:
        errors.append("if there's * here, no other policy should be here")
    return errors


def _event_problem(policy: Policy, seen: list[str], field: str) -> str:
    """The first complaint about one policy's events (``getEventList``: ``events`` then
    ``event``, each once), recording the events it adds to ``seen``."""
    listed = [*policy.events, *([policy.event] if policy.event else [])]
    for event in dict.fromkeys(listed):
        if not POLICY_EVENTS.get(event, False):
            return f'{field}: Invalid value: "{event}": invalid policy event'
        if not POLICY_ACTIONS.get(policy.action, False):
            return f'{field}: Invalid value: "{policy.action}": invalid policy action'
        if event in seen:
            return f"duplicate event {event}  across different policy"  # two spaces, as Go's
        seen.append(event)
    return ""


def _multierror(errors: Sequence[str]) -> str:
    """hashicorp/go-multierror's ``ListFormatFunc``, the text of an appended error."""
    if len(errors) == 1:
        return f"1 error occurred:\n\t* {errors[0]}\n\n"
    points = "\n\t".join(f"* {e}" for e in errors)
    return f"{len(errors)} errors occurred:\n\t{points}\n\n"


def volumes_problem(volumes: Sequence[Mapping[str, Any]]) -> str:
    """``validateIO`` (util.go): the first complaint about the Job's volumes."""
    mount_paths: set[str] = set()
    for volume in volumes:
        mount_path = str(volume.get("mountPath") or "")
        claim_name = str(volume.get("volumeClaimName") or "")
        if not mount_path:
            return " mountPath is required;"
        if mount_path in mount_paths:
            return f" duplicated mountPath: {mount_path};"
        if volume.get("volumeClaim") is None and not claim_name:
            return " either VolumeClaim or VolumeClaimName must be specified;"
        if claim_name:
            if volume.get("volumeClaim") is not None:
                return (
                    "conflict: If you want to use an existing PVC, just specify "
                    "VolumeClaimName.If you want to create a new PVC, you do not need to "
                    "specify VolumeClaimName"
                )
            errors = dns1123_subdomain_errors(claim_name)
            if errors:
                return f"invalid VolumeClaimName {claim_name} : {_go_list(errors)}"
        mount_paths.add(mount_path)
    return ""


def job_queue_problem(name: str, queues: Mapping[str, Queue]) -> str:
    """The queue a Job is submitted to must exist, be Open, not be ``root`` and have no
    child queues."""
    problem = queue_state_problem(name, dict(queues))
    if name not in queues:
        return problem
    if name == ROOT_QUEUE:
        return problem + " can not submit job to root queue;"
    children = [q for q in queues.values() if q.parent == name]
    if children:
        problem += (
            f" can only submit job to leaf queue, queue `{name}` has {len(children)} child queues;"
        )
    return problem


def is_dag(tasks: Sequence[Task]) -> bool:
    """``topoSort``: the tasks' ``dependsOn`` form a DAG. Quirk kept: a dependency on a
    task that does not exist leaves its dependant waiting, so it is "not a DAG" too."""
    in_degree = {t.name: 0 for t in tasks}
    graph: dict[str, list[str]] = {}
    for task in tasks:
        for dependency in task.depends_on or ():
            graph.setdefault(dependency, []).append(task.name)
            in_degree[task.name] += 1
    ready = [name for name, degree in in_degree.items() if degree == 0]
    done = 0
    while ready:
        name = ready.pop()
        done += 1
        for dependant in graph.pop(name, ()):
            in_degree[dependant] -= 1
            if in_degree[dependant] == 0:
                ready.append(dependant)
    return done == len(tasks)


# -- validateTaskTemplate: Kubernetes' pod template rules, and the NUMA policy's ----------------


def template_problem(task: Task, index: int) -> str:
    """``validateTaskTemplate``: Kubernetes' complaints about the task's pod template,
    else the topology policy's."""
    spec = task.template.get("spec") or {}
    errors = _pod_spec_errors(spec, task)
    if errors:
        return f"spec.task[{index}]." + "".join(f"{e}. " for e in errors)
    if task.topology_policy in NO_TOPOLOGY_POLICY:
        return ""
    containers = [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]
    for number, container in enumerate(containers):
        resources = container.get("resources") or {}
        requests = resources.get("requests") or resources.get("limits") or {}
        cpu = resource_list(requests, task.at).get("cpu")
        if cpu is None or cpu.denominator != 1 or cpu == 0:
            return f"the cpu request isn't  an integer in spec.task[{index}] container[{number}]."
    return ""


def _pod_spec_errors(spec: Mapping[str, Any], task: Task) -> list[str]:
    """``ValidatePodTemplate``'s errors a Job's author meets, in its order: containers
    (a name, a DNS label, unique; an image; requests within limits, equal to them for an
    extended resource; the values as written, not canonical), then the restart
    policy (defaulted to Always)."""
    base = "template.spec"
    errors: list[str] = []
    containers = spec.get("containers") or []
    if not containers:
        errors.append(f"{base}.containers: Required value")
    names: set[str] = set()
    for key in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(key) or ()):
            errors.extend(_container_errors(container, f"{base}.{key}[{i}]", names, task))
    restart = spec.get("restartPolicy") or "Always"
    if restart not in RESTART_POLICIES:
        supported = ", ".join(f'"{p}"' for p in RESTART_POLICIES)
        errors.append(
            f'{base}.restartPolicy: Unsupported value: "{restart}": supported values: {supported}'
        )
    return errors


def _container_errors(
    container: Mapping[str, Any], path: str, names: set[str], task: Task
) -> list[str]:
    errors: list[str] = []
    name = str(container.get("name") or "")
    if not name:
        errors.append(f"{path}.name: Required value")
    else:
        errors.extend(
            f'{path}.name: Invalid value: "{name}": {e}' for e in dns1123_label_errors(name)
        )
        if name in names:
            errors.append(f'{path}.name: Duplicate value: "{name}"')
        names.add(name)
    if not container.get("image"):
        errors.append(f"{path}.image: Required value")
    resources = container.get("resources") or {}
    written = resources.get("requests") or {}
    requests = resource_list(written, task.at)
    limits = resource_list(resources.get("limits"), task.at)
    for resource, value in requests.items():
        if resource not in limits:
            continue
        limit = (resources.get("limits") or {})[resource]
        bad = f'{path}.resources.requests: Invalid value: "{written[resource]}": must be'
        if value != limits[resource] and not _overcommit_allowed(resource):
            errors.append(f"{bad} equal to {resource} limit of {limit}")
        elif value > limits[resource]:
            errors.append(f"{bad} less than or equal to {resource} limit of {limit}")
    return errors


def _overcommit_allowed(resource: str) -> bool:
    """``IsOvercommitAllowed``: a native resource (no domain, or a kubernetes.io one)
    that is not huge pages may be requested below its limit; an extended resource (a
    GPU) may not."""
    native = "/" not in resource or "kubernetes.io/" in resource
    return native and not resource.startswith("hugepages-")


# -- apimachinery's name rules, worded as validation.go words them ----------------------------


def dns1123_label_errors(name: str) -> list[str]:
    """``validation.IsDNS1123Label``."""
    return _dns1123_errors(name, 63, _DNS1123_LABEL, _DNS_LABEL_RULE)


def dns1123_subdomain_errors(name: str) -> list[str]:
    """``validation.IsDNS1123Subdomain``."""
    return _dns1123_errors(name, 253, _DNS1123_SUBDOMAIN, _DNS_SUBDOMAIN_RULE)


def _dns1123_errors(name: str, longest: int, pattern: re.Pattern[str], rule: str) -> list[str]:
    errors = [f"must be no more than {longest} characters"] if len(name) > longest else []
    if not pattern.fullmatch(name):
        errors.append(rule)
    return errors


def qualified_name_errors(name: str) -> list[str]:
    """``validation.IsQualifiedName`` of a name without a prefix."""
    if not name:
        return ["name part must be non-empty"]
    errors = []
    if len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.fullmatch(name):
        errors.append(_QUALIFIED_RULE)
    return errors


def _refuse(message: str, location: Location | None) -> None:
    # AdmitJobs answers with strings.TrimSpace of the message.
    raise AdmissionRefused(WEBHOOK, message.strip(), location)
