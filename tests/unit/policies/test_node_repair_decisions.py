"""Node repair's decisions on a fake clock: Karpenter's policies and tolerations, the
earliest toleration first, and the 20%-of-a-pool (rounded up) block."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduling.repair import Condition, NodeHealth, conditions_of, decide

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def _node(
    name: str,
    pool: str | None = "default",
    *,
    claim: bool = True,
    deleting: bool = False,
    **bad: tuple[str, timedelta],
) -> NodeHealth:
    conditions = {"Ready": Condition("True", NOW - timedelta(days=1))}
    for type_, (status, ago) in bad.items():
        conditions[type_] = Condition(status, NOW - ago)
    return NodeHealth(name, conditions, pool, f"{name}-claim" if claim else None, deleting)


def _healthy(n: int, pool: str = "default") -> list[NodeHealth]:
    return [_node(f"ok{i}", pool) for i in range(n)]


def test_not_ready_past_thirty_minutes_is_repaired_not_before() -> None:
    young = _node("a", Ready=("False", timedelta(minutes=29)))
    out = decide([young, *_healthy(9)], NOW)
    assert out.repairs == []
    assert out.next_check == NOW + timedelta(minutes=1)
    old = _node("a", Ready=("Unknown", timedelta(minutes=31)))
    out = decide([old, *_healthy(9)], NOW)
    assert [(r.node, r.claim, r.condition) for r in out.repairs] == [
        ("a", "a-claim", "Ready=Unknown")
    ]


def test_aws_monitoring_conditions_have_their_own_tolerations() -> None:
    gpu = _node("g", AcceleratedHardwareReady=("False", timedelta(minutes=11)))
    disk = _node("d", StorageReady=("False", timedelta(minutes=11)))
    fine = _node("t", KernelReady=("True", timedelta(hours=5)))
    out = decide([gpu, disk, fine, *_healthy(12)], NOW)
    assert [r.node for r in out.repairs] == ["g"]  # 10 minutes for accelerators, 30 for disks
    assert out.next_check == NOW + timedelta(minutes=19)


def test_more_than_a_fifth_of_the_pool_unhealthy_blocks_repair() -> None:
    # 5 nodes: 20% rounded up is 1; two unhealthy (one still within its toleration) blocks.
    sick = _node("a", Ready=("False", timedelta(hours=1)))
    fresh = _node("b", Ready=("False", timedelta(minutes=1)))
    out = decide([sick, fresh, *_healthy(3)], NOW)
    assert out.repairs == [] and [b.node for b in out.blocked] == ["a"]
    assert "20%" in out.blocked[0].message and "nodepool default" in out.blocked[0].message
    # 10 nodes: two unhealthy are within 20%.
    out = decide([sick, fresh, *_healthy(8)], NOW)
    assert [r.node for r in out.repairs] == ["a"]


def test_pools_are_counted_apart() -> None:
    sick = _node("a", "web", Ready=("False", timedelta(hours=1)))
    others = [_node(f"b{i}", "batch", Ready=("False", timedelta(hours=1))) for i in range(3)]
    out = decide([sick, *_healthy(4, "web"), *others, *_healthy(1, "batch")], NOW)
    assert [r.node for r in out.repairs] == ["a"]
    assert sorted(b.node for b in out.blocked) == ["b0", "b1", "b2"]


def test_unmanaged_or_deleting_nodes_are_not_repaired() -> None:
    stray = _node("x", None, claim=False, Ready=("False", timedelta(hours=2)))
    going = _node("y", deleting=True, Ready=("False", timedelta(hours=2)))
    assert decide([stray, going, *_healthy(10)], NOW).repairs == []


def test_conditions_read_from_a_node_object() -> None:
    node = {
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "Unknown",
                    "lastTransitionTime": "2026-01-05T11:00:00Z",
                },
                {"type": "DiskPressure", "status": "False"},  # no time: skipped
            ]
        }
    }
    assert conditions_of(node) == {"Ready": Condition("Unknown", NOW - timedelta(hours=1))}
