"""What TaskInfo and JobInfo keep by hand for speed (slot copies, counts) matches what
they would derive."""

from __future__ import annotations

from fractions import Fraction

from vspec.api.task_info import TaskInfo, TransactionContext
from vspec.api.types import TaskStatus
from vspec.model.corev1 import Container
from vspec.model.objects import ObjectMeta, Pod


def test_clone_copies_every_slot_and_owns_its_mutable_parts() -> None:
    pod = Pod(ObjectMeta("p", "ns", uid="u"), containers=[Container(requests={"cpu": Fraction(1)})])
    task = TaskInfo(pod)
    task.last_transaction = TransactionContext("n1", TaskStatus.Allocated)
    task.numa_info = object()
    task.bind_annotations = {"a": "b"}
    clone = task.clone()
    for name in TaskInfo.__slots__:
        assert getattr(clone, name) == getattr(task, name), name
    assert clone.resreq is not task.resreq and clone.init_resreq is not task.init_resreq
    assert clone.last_transaction is not task.last_transaction
    clone.resreq.milli_cpu = 5
    assert task.resreq.milli_cpu == 1000


def test_job_counts_its_pending_best_effort_tasks_as_the_index_holds_them() -> None:
    from vspec.api.job_info import JobInfo

    def pod(name: str, cpu: int) -> Pod:
        requests = {"cpu": Fraction(cpu)} if cpu else {}
        return Pod(ObjectMeta(name, "ns", uid=name), containers=[Container(requests=requests)])

    job = JobInfo("ns/j")
    tasks = [TaskInfo(pod(f"p{i}", i % 2)) for i in range(6)]

    def recount() -> int:
        return sum(1 for t in job.tasks_in(TaskStatus.Pending) if t.best_effort)

    for task in tasks:
        job.add_task_info(task)
    assert job.pending_best_effort_task_num() == recount() == 3
    job.update_task_status(tasks[0], TaskStatus.Allocated)
    job.update_task_status(tasks[1], TaskStatus.Allocated)
    assert job.pending_best_effort_task_num() == recount() == 2
    job.delete_task_info(tasks[2])
    job.update_task_status(tasks[0], TaskStatus.Pending)
    assert job.pending_best_effort_task_num() == recount() == 2
    assert job.clone().pending_best_effort_task_num() == 2


def test_kept_task_texts_follow_every_field_the_text_prints() -> None:
    """logprint prints each task of each ready job every session: the texts kept from
    the last session are reused only for a task that prints the same."""
    from vspec.api.task_info import NUMA_POLICY_KEY, TOPOLOGY_DECISION_KEY, TaskTexts

    pod = Pod(ObjectMeta("p", "ns", uid="u"), containers=[Container(requests={"cpu": Fraction(1)})])
    texts = TaskTexts()
    task = TaskInfo(pod)
    assert texts(task) == str(task)
    changes = [
        lambda t: setattr(t, "status", TaskStatus.Running),
        lambda t: setattr(t, "priority", 7),
        lambda t: setattr(t.resreq, "milli_cpu", 2000),
        lambda t: t.resreq.scalars.__setitem__("nvidia.com/gpu", 1000),
        lambda t: setattr(t, "preemptable", not t.preemptable),
        lambda t: setattr(t, "revocable_zone", "*"),
        lambda t: setattr(t, "task_role", "worker"),
        lambda t: t.pod.meta.annotations.__setitem__(NUMA_POLICY_KEY, "best-effort"),
        lambda t: t.pod.meta.annotations.__setitem__(
            TOPOLOGY_DECISION_KEY, '{"numa":{"0":{"cpu":"1"}}}'
        ),
    ]
    for change in changes:
        texts.next_session()
        task = task.clone()
        before = texts(task)
        change(task)
        assert texts(task) == str(task) != before
