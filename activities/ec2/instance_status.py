"""EC2 instance status checks as a health signal, as Karpenter's AWS provider reads them.

Three DescribeInstanceStatus queries (the API ANDs filters of different names, and Karpenter
wants any of them): instance status impaired, system status impaired, and a scheduled event
(instance or system reboot, system maintenance, instance retirement or stop). A status
check counts once it has failed for ``UNHEALTHY_SECONDS`` (120 s); a scheduled event counts
at once. EBS status checks are left out, as Karpenter leaves them (a failed volume may be a
pod's, not the node's). The answers are also checked here, not only filtered by EC2: an
emulator may ignore filters.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from activities.cloud.health import EVENT_STATUS, INSTANCE_STATUS, SYSTEM_STATUS, Unhealthy

__all__ = ["EVENT_STATUS", "INSTANCE_STATUS", "SYSTEM_STATUS", "Unhealthy", "unhealthy_instances"]

UNHEALTHY_SECONDS = 120
EVENT_CODES = (
    "instance-reboot",
    "system-reboot",
    "system-maintenance",
    "instance-retirement",
    "instance-stop",
)
FILTERS: tuple[list[dict[str, Any]], ...] = (
    [{"Name": "instance-status.status", "Values": ["impaired"]}],
    [{"Name": "system-status.status", "Values": ["impaired"]}],
    [{"Name": "event.code", "Values": list(EVENT_CODES)}],
)


def _failed_since(summary: dict[str, Any] | None, now: datetime) -> bool:
    if not summary or summary.get("Status") != "impaired":
        return False
    for d in summary.get("Details") or []:
        if d.get("Status") != "failed":
            continue
        since = d.get("ImpairedSince")
        if since is None or now - since >= timedelta(seconds=UNHEALTHY_SECONDS):
            return True
    return False


def categories_of(status: dict[str, Any], now: datetime) -> frozenset[str]:
    """What of one InstanceStatuses entry makes the instance unhealthy now."""
    out = set()
    if _failed_since(status.get("InstanceStatus"), now):
        out.add(INSTANCE_STATUS)
    if _failed_since(status.get("SystemStatus"), now):
        out.add(SYSTEM_STATUS)
    for event in status.get("Events") or []:
        if event.get("Code") in EVENT_CODES and "[Completed]" not in str(
            event.get("Description") or ""
        ):
            out.add(EVENT_STATUS)
    return frozenset(out)


def unhealthy_instances(ec2: Any, now: datetime) -> list[Unhealthy]:
    """Every instance whose status checks or scheduled events make it unhealthy now."""
    seen: dict[str, dict[str, Any]] = {}
    for filters in FILTERS:
        token: str | None = None
        while True:
            kw: dict[str, Any] = {"Filters": filters, "IncludeAllInstances": False}
            if token:
                kw["NextToken"] = token
            page = ec2.describe_instance_status(**kw)
            for s in page.get("InstanceStatuses") or []:
                seen.setdefault(str(s["InstanceId"]), s)
            token = page.get("NextToken")
            if not token:
                break
    out = []
    for instance_id, status in sorted(seen.items()):
        cats = categories_of(status, now)
        if cats:
            out.append(Unhealthy(instance_id, cats))
    return out
