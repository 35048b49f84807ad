"""The sandbox's spot eviction: the notice re-asserted on the Node until its deadline, then
the VM taken; read back through the worker's own parser of the condition."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from activities.azure.eviction import CONDITION, SCHEDULED, parse_notice
from sandbox.azure.spot_eviction import SpotEvictions


class Clock:
    def __init__(self) -> None:
        self.at = datetime(2026, 11, 28, 13, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.at


def test_notice_then_the_vm_taken_at_its_deadline() -> None:
    clock = Clock()
    patches: list[tuple[str, dict[str, Any]]] = []
    deleted: list[str] = []
    evictions = SpotEvictions(
        patch_node_status=lambda name, body: patches.append((name, body)),
        delete_vm=deleted.append,
        now=clock,
    )
    evictions.step()  # nothing outstanding
    assert patches == [] and deleted == []
    eviction = evictions.announce("vm-a", notice_seconds=30)
    evictions.step()
    clock.at += timedelta(seconds=10)
    evictions.step()
    assert [name for name, _ in patches] == ["vm-a", "vm-a"]
    condition = patches[-1][1]["status"]["conditions"][0]
    assert condition["type"] == CONDITION and condition["status"] == "True"
    notice = parse_notice(condition["message"])
    assert notice is not None and notice.kind == SCHEDULED
    assert notice.not_before == eviction.not_before
    assert deleted == []
    clock.at += timedelta(seconds=20)
    evictions.step()
    assert deleted == ["vm-a"] and evictions.pending() == [] and evictions.evicted == ["vm-a"]
    evictions.step()
    assert deleted == ["vm-a"] and len(patches) == 2


def test_a_vm_whose_delete_fails_is_taken_at_the_next_step() -> None:
    clock = Clock()
    attempts: list[str] = []

    def delete(name: str) -> None:
        attempts.append(name)
        if len(attempts) == 1:
            raise RuntimeError("ARM busy")

    evictions = SpotEvictions(lambda name, body: None, delete, now=clock)
    evictions.announce("vm-b", notice_seconds=0)
    evictions.step()
    assert evictions.pending() == ["vm-b"]
    evictions.step()
    assert attempts == ["vm-b", "vm-b"] and evictions.evicted == ["vm-b"]
