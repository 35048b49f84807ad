"""The provisioning round's catalogs: each pool's own, its EC2NodeClass's view, the
provider's list itself (the same object while the catalog is unchanged, so what the solver
keeps per catalog is kept from round to round), shared by the pools of one NodeClass.
The one merged catalog the disruption round still reads: with one EC2NodeClass, the
provider's list itself; merged otherwise."""

from __future__ import annotations

from typing import Any

from activities.cloud.kinds import EC2_NODECLASS
from activities.planning.plan import (
    disruption_catalogs,
    instance_types,
    pool_catalogs,
)
from benchmarks.workloads import nodepool_manifest
from models.instancetype import InstanceType, Offering
from models.nodepool import NodePool


def _type(name: str) -> InstanceType:
    return InstanceType.build(
        name, {"cpu": 2000, "memory": 4 << 30, "pods": 29}, [Offering("zone-a", "on-demand", 0.1)]
    )


class FakeEC2:
    """Lists per NodeClass name, as the provider hands them out."""

    nodeclass_kind = EC2_NODECLASS

    def __init__(self, lists: dict[str, list[InstanceType]]) -> None:
        self.lists = lists
        self.without_class: list[InstanceType] = [_type("any")]
        self.broken: set[str] = set()

    def instance_types(self, nodeclass: Any = None) -> list[InstanceType]:
        if nodeclass is None:
            return self.without_class
        return self.lists[nodeclass.metadata.name]

    def nodeclass_not_ready(self, nodeclass: Any) -> str | None:
        return "no subnet" if nodeclass.metadata.name in self.broken else None


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
        ec2,  # type: ignore[arg-type]
        [_pool("p1", "one"), _pool("p2", "two")],
        {"one": _class("one"), "two": _class("two")},
    )
    assert [t.name for t in two] == ["a", "b", "c"]
    dup = [a, a, b]
    ec2.lists["dup"] = dup
    merged = instance_types(ec2, [_pool("p", "dup")], {"dup": _class("dup")})  # type: ignore[arg-type]
    assert merged is not dup and [t.name for t in merged] == ["a", "b"]


def test_each_pool_gets_its_nodeclass_list_and_pools_of_one_class_share_it() -> None:
    one, two = [_type("a")], [_type("a"), _type("b")]
    ec2 = FakeEC2({"one": one, "two": two})
    pools = [_pool("p1", "one"), _pool("p2", "two"), _pool("p3", "one")]
    classes = {"one": _class("one"), "two": _class("two")}
    default, own = pool_catalogs(ec2, pools, classes)  # type: ignore[arg-type]
    assert own["p1"] is one and own["p3"] is one and own["p2"] is two
    assert default is one  # every pool has its own: the first pool's stands for the round


def test_one_nodeclass_gives_the_round_one_catalog() -> None:
    listed = [_type("a"), _type("b")]
    ec2 = FakeEC2({"one": listed})
    pools = [_pool("p1", "one"), _pool("p2", "one")]
    default, own = pool_catalogs(ec2, pools, {"one": _class("one")})  # type: ignore[arg-type]
    assert default is listed and all(types is listed for types in own.values())


def test_a_pool_without_its_nodeclass_sees_the_provider_catalog() -> None:
    one = [_type("a")]
    ec2 = FakeEC2({"one": one})
    pools = [_pool("p1", "one"), _pool("p2", "missing")]
    default, own = pool_catalogs(ec2, pools, {"one": _class("one")})  # type: ignore[arg-type]
    assert default is ec2.without_class and "p2" not in own and own["p1"] is one


def test_a_nodeclass_that_is_not_ready_gives_its_pools_nothing_to_launch() -> None:
    ec2 = FakeEC2({"one": [_type("a")], "bad": [_type("a")]})
    ec2.broken.add("bad")
    pools = [_pool("p1", "bad"), _pool("p2", "one")]
    classes = {"one": _class("one"), "bad": _class("bad")}
    _, own = pool_catalogs(ec2, pools, classes)  # type: ignore[arg-type]
    assert own["p1"] == [] and own["p2"] is ec2.lists["one"]


def test_a_disruption_round_prices_from_the_merged_catalog_and_plans_on_the_pools_own() -> None:
    a, b = _type("a"), _type("b")
    ec2 = FakeEC2({"one": [a], "two": [b], "bad": [a]})
    ec2.broken.add("bad")
    pools = [_pool("p1", "one"), _pool("p2", "two"), _pool("p3", "bad")]
    classes = {"one": _class("one"), "two": _class("two"), "bad": _class("bad")}
    merged, own = disruption_catalogs(ec2, pools, classes)  # type: ignore[arg-type]
    assert [t.name for t in merged] == ["a", "b"]
    assert own == {"p1": ec2.lists["one"], "p2": ec2.lists["two"]}  # p3: the merged one
