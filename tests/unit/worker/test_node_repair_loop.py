"""The NodeRepair loop's pacing: a pass every 30 s, sooner when a toleration runs out first;
EC2's status checks read at most once a minute; a failed status read does not stop the
node-condition pass."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from activities.repair.nodes import RepairOutcome
from worker.running import node_repair
from worker.running.node_repair import NodeRepairLoop

START = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def test_pacing_and_status_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [START]
    polls: list[datetime] = []
    due: list[datetime | None] = [None]

    class _Cloud:  # the provider's health read (CloudProvider.unhealthy_instances)
        def unhealthy_instances(self, at: datetime) -> list[Any]:
            polls.append(at)
            if len(polls) == 2:
                raise RuntimeError("UnauthorizedOperation")
            return []

    monkeypatch.setattr(node_repair, "instance_status_pass", lambda *a, **k: [])
    monkeypatch.setattr(
        node_repair, "repair_pass", lambda kube, at, counters=None: RepairOutcome(next_check=due[0])
    )
    loop = NodeRepairLoop(None, cloud=_Cloud(), clock=lambda: now[0])  # type: ignore[arg-type]
    assert loop.run_once() == 30.0
    now[0] += timedelta(seconds=30)
    due[0] = now[0] + timedelta(seconds=5)
    assert loop.run_once() == 5.0  # a toleration runs out before the next period
    assert polls == [START]  # 30 s later: EC2 not asked again
    now[0] += timedelta(seconds=30)
    due[0] = None
    assert loop.run_once() == 30.0  # the status read failed; the pass still ran
    assert polls == [START, START + timedelta(seconds=60)]
