"""Launch requests, EC2 reads and EventBridge messages the EC2 component tests share."""

from __future__ import annotations

import json
from typing import Any

from activities.ec2.launch_types import LaunchRequest

M5_FAMILY = [
    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},
    {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge"]},
]


def request(name: str = "claim-a", capacity: str = "on-demand", **kw: Any) -> LaunchRequest:
    reqs = [
        *M5_FAMILY,
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity]},
        *kw.pop("requirements", []),
    ]
    return LaunchRequest(
        nodeclaim_name=name,
        nodeclaim_uid=kw.pop("uid", f"uid-{name}"),
        nodepool_name="default",
        nodeclass_name="default",
        requirements=reqs,
        resources=kw.pop("resources", {"cpu": "1", "memory": "1Gi", "pods": "3"}),
        labels={"team": "web"},
        taints=[{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
        **kw,
    )


def cheapest(env: Any, nc: Any, capacity: str, types: set[str]) -> tuple[float, str, str]:
    offers = [
        (o.price, t.name, o.zone)
        for t in env.provider.instance_types(nc)
        if t.name in types
        for o in t.offerings
        if o.capacity_type == capacity and o.available
    ]
    return min(offers)


def lt_data(env: Any, name: str) -> dict[str, Any]:
    versions = env.clients.ec2.describe_launch_template_versions(LaunchTemplateName=name)
    data: dict[str, Any] = versions["LaunchTemplateVersions"][0]["LaunchTemplateData"]
    return data


def instances(env: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in env.clients.ec2.describe_instances()["Reservations"]:
        out.extend(i for i in r["Instances"] if i["State"]["Name"] != "terminated")
    return out


def event(source: str, detail_type: str, detail: dict[str, Any]) -> str:
    return json.dumps(
        {
            "version": "0",
            "id": "e-1",
            "source": source,
            "detail-type": detail_type,
            "time": "2024-11-06T00:00:00Z",
            "region": "us-east-1",
            "detail": detail,
        }
    )
