"""The provisioning round's catalog: with one EC2NodeClass, the provider's list itself (the
same object while the catalog is unchanged, so what the solver keeps per catalog is kept
from round to round); merged otherwise, as before."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from activities.planning.plan import instance_types  # noqa: E402
from benchmarks.workloads import nodepool_manifest  # noqa: E402
from models.instancetype import InstanceType, Offering  # noqa: E402
from models.nodepool import NodePool  # noqa: E402


def _type(name: str) -> InstanceType:
    return InstanceType.build(
        name, {"cpu": 2000, "memory": 4 << 30, "pods": 29}, [Offering("zone-a", "on-demand", 0.1)]
    )


class FakeEC2:
    """Lists per NodeClass name, as the provider hands them out."""

    def __init__(self, lists: dict[str, list[InstanceType]]) -> None:
        self.lists = lists

    def instance_types(self, nodeclass: Any = None) -> list[InstanceType]:
        return self.lists[nodeclass.metadata.name] if nodeclass is not None else []

    def nodeclass_not_ready(self, nodeclass: Any) -> str | None:
        return None


def _pool(name: str, nodeclass: str) -> NodePool:
    body = nodepool_manifest(name)
    body["spec"]["template"]["spec"]["nodeClassRef"]["name"] = nodeclass
    return NodePool.model_validate(body)


def _class(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "r",
            "subnetSelectorTerms": [{"tags": {"a": "b"}}],
            "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
        },
    }


def test_one_nodeclass_hands_on_its_list() -> None:
    listed = [_type("a"), _type("b")]
    ec2 = FakeEC2({"one": listed})
    pools = [_pool("p1", "one"), _pool("p2", "one")]
    classes = {"one": _class("one")}
    assert instance_types(ec2, pools, classes) is listed  # type: ignore[arg-type]


def test_several_nodeclasses_or_repeated_names_are_merged() -> None:
    a, b, c = _type("a"), _type("b"), _type("c")
    ec2 = FakeEC2({"one": [a, b], "two": [b, c], "dup": [a, a, b]})
    two = instance_types(
        ec2,
        [_pool("p1", "one"), _pool("p2", "two")],  # type: ignore[arg-type]
        {"one": _class("one"), "two": _class("two")},
    )
    assert [t.name for t in two] == ["a", "b", "c"]
    dup = [a, a, b]
    ec2.lists["dup"] = dup
    merged = instance_types(ec2, [_pool("p", "dup")], {"dup": _class("dup")})  # type: ignore[arg-type]
    assert merged is not dup and [t.name for t in merged] == ["a", "b"]
