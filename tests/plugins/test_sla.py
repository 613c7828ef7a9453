"""sla: jobs with a waiting time first, earliest deadline first; admitted after the wait."""

from __future__ import annotations

from datetime import timedelta

from tests.builders import NOW, pod_group, queue, session
from vspec.model.objects import Cluster


def _entry(**arguments: object) -> dict[str, object]:
    return {
        "name": "sla",
        "enableJobOrder": True,
        "enableJobEnqueued": True,
        "enableJobPipelined": True,
        "arguments": arguments,
    }


def _cluster() -> Cluster:
    return Cluster(
        queues=[queue("q1")],
        pod_groups=[
            pod_group("ns", "plain", "q1", creation=NOW - timedelta(minutes=5)),
            pod_group(
                "ns",
                "annotated",
                "q1",
                annotations={"sla-waiting-time": "1h"},
                creation=NOW - timedelta(minutes=30),
            ),
            pod_group("ns", "late", "q1", annotations={"sla-waiting-time": "bogus"}, creation=NOW),
        ],
    )


def test_global_waiting_time_orders_and_admits() -> None:
    ssn = session(_cluster(), [_entry(**{"sla-waiting-time": "3m"})])
    plain, annotated = ssn.jobs["ns/plain"], ssn.jobs["ns/annotated"]
    # plain: deadline now-2m; annotated: now+30m.
    assert ssn.job_order_fn(plain, annotated) is True
    assert ssn.job_order_fn(annotated, plain) is False
    assert ssn.registered("job_enqueueable", "sla")(plain) == 1
    assert ssn.registered("job_pipelined", "sla")(annotated) == 0
    # An unparsable annotation falls back to the global waiting time.
    assert ssn.jobs["ns/late"].waiting_time is None
    assert ssn.registered("job_enqueueable", "sla")(ssn.jobs["ns/late"]) == 0


def test_without_global_waiting_time_only_annotated_jobs_count() -> None:
    ssn = session(_cluster(), [_entry()])
    plain, annotated = ssn.jobs["ns/plain"], ssn.jobs["ns/annotated"]
    assert ssn.job_order_fn(annotated, plain) is True
    assert ssn.registered("job_enqueueable", "sla")(plain) == 0


def test_invalid_global_waiting_time_is_reported() -> None:
    ssn = session(_cluster(), [_entry(**{"sla-waiting-time": "soon"})])
    texts = ssn.log.texts()
    assert (
        "Error occurs in parsing global job waiting time in sla plugin, "
        'err: time: invalid duration "soon".' in texts
    )
    assert "Invalid global waiting time setting: 0s in sla plugin." in texts
    assert ssn.registered("job_enqueueable", "sla")(ssn.jobs["ns/plain"]) == 0
