"""What a fault test asks of the cluster and the (emulated) cloud once the dust settles.

The same three questions follow every crash, kill and outage: was an instance launched twice
for one NodeClaim (a relaunch leaves a second instance, terminated or not), is a live instance
left without a NodeClaim (a leak), and does a node or NodeClaim still carry the marks of a
disruption that no longer runs (the ``karpenter.sh/disrupted`` taint, the ``DisruptionReason``
condition). The worker crash test (``tests/e2e``) and the engine fault tests
(``tests/workflows/production``) both ask them here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from models import labels as L

GONE = ("terminated", "shutting-down")
NODECLAIM_TAG = "karpenter.sh/nodeclaim"
NODEPOOL_TAG = "karpenter.sh/nodepool"
DISRUPTION_REASON = "DisruptionReason"


def every_instance(ec2: Any) -> Iterator[dict[str, Any]]:
    """Every instance, page by page: one DescribeInstances call answers at most a page (the
    emulator's is 100 reservations), and a suite's shared account holds more."""
    for page in ec2.get_paginator("describe_instances").paginate():
        for reservation in page["Reservations"]:
            yield from reservation["Instances"]


def instances(
    ec2: Any, *, nodepool: str | None = None, live_only: bool = False
) -> dict[str, list[str]]:
    """NodeClaim tag → instance ids (``"?"`` for an untagged instance), terminated ones
    included unless ``live_only``; only ``nodepool``'s instances when it is given."""
    out: dict[str, list[str]] = {}
    for instance in every_instance(ec2):
        if live_only and instance["State"]["Name"] in GONE:
            continue
        tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
        if nodepool is not None and tags.get(NODEPOOL_TAG) != nodepool:
            continue
        out.setdefault(tags.get(NODECLAIM_TAG, "?"), []).append(instance["InstanceId"])
    return out


def double_launches(ever: dict[str, list[str]]) -> list[str]:
    """One line per NodeClaim that got more than one instance, ever."""
    return [
        f"nodeclaim {n} launched {len(ids)} instances: {ids}"
        for n, ids in ever.items()
        if len(ids) > 1
    ]


def disruption_leftovers(kube: Kube, *, nodepool: str | None = None) -> list[str]:
    """One line per node still tainted ``karpenter.sh/disrupted`` and per NodeClaim still
    carrying ``DisruptionReason``: what a finished or undone command must not leave behind."""
    selector = f"{L.NODEPOOL}={nodepool}" if nodepool else ""
    problems = []
    listed = raw.call(kube.core.list_node, label_selector=selector).get("items") or []
    for node in listed:
        taints = (node.get("spec") or {}).get("taints") or []
        if any(t.get("key") == L.DISRUPTED_TAINT_KEY for t in taints):
            problems.append(
                f"node {node['metadata']['name']} still tainted {L.DISRUPTED_TAINT_KEY}"
            )
    claims, _ = nodeclaims.list_(kube, nodepool=nodepool)
    for claim in claims:
        conditions = (claim.get("status") or {}).get("conditions") or []
        if any(c.get("type") == DISRUPTION_REASON for c in conditions):
            problems.append(f"nodeclaim {claim['metadata']['name']} keeps {DISRUPTION_REASON}")
    return problems
