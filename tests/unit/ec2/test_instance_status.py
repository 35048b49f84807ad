"""EC2 instance status checks read as Karpenter's AWS provider reads them: a failed
instance or system check counts after 120 s, a scheduled event at once, EBS checks never;
an answer that ignored the filters (as an emulator may) is checked again here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from activities.ec2.instance_status import (
    EVENT_STATUS,
    INSTANCE_STATUS,
    SYSTEM_STATUS,
    Unhealthy,
    unhealthy_instances,
)

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def _check(status: str, failed_for: int | None = None) -> dict[str, Any]:
    details: list[dict[str, Any]] = [{"Name": "reachability", "Status": "passed"}]
    if failed_for is not None:
        details = [
            {
                "Name": "reachability",
                "Status": "failed",
                "ImpairedSince": NOW - timedelta(seconds=failed_for),
            }
        ]
    return {"Status": status, "Details": details}


STATUSES = [
    {"InstanceId": "i-ok", "InstanceStatus": _check("ok"), "SystemStatus": _check("ok")},
    {"InstanceId": "i-young", "InstanceStatus": _check("impaired", 60)},
    {"InstanceId": "i-sick", "InstanceStatus": _check("impaired", 180)},
    {"InstanceId": "i-host", "SystemStatus": _check("impaired", 600)},
    {
        "InstanceId": "i-retiring",
        "InstanceStatus": _check("ok"),
        "Events": [{"Code": "instance-retirement", "Description": "retiring"}],
    },
    {
        "InstanceId": "i-rebooted",
        "Events": [{"Code": "system-reboot", "Description": "[Completed] done"}],
    },
    {"InstanceId": "i-ebs", "AttachedEbsStatus": _check("impaired", 600)},
]


class FakeEC2:
    """Answers every query with every status, two per page, whatever the filters say."""

    def __init__(self) -> None:
        self.queries: list[list[dict[str, Any]]] = []

    def describe_instance_status(self, **kw: Any) -> dict[str, Any]:
        start = int(kw.get("NextToken") or 0)
        if start == 0:
            self.queries.append(kw["Filters"])
        page: dict[str, Any] = {"InstanceStatuses": STATUSES[start : start + 2]}
        if start + 2 < len(STATUSES):
            page["NextToken"] = str(start + 2)
        return page


def test_unhealthy_instances_follow_karpenters_rules() -> None:
    ec2 = FakeEC2()
    assert unhealthy_instances(ec2, NOW) == [
        Unhealthy("i-host", frozenset({SYSTEM_STATUS})),
        Unhealthy("i-retiring", frozenset({EVENT_STATUS})),
        Unhealthy("i-sick", frozenset({INSTANCE_STATUS})),
    ]
    names = [q[0]["Name"] for q in ec2.queries]
    assert names == ["instance-status.status", "system-status.status", "event.code"]
