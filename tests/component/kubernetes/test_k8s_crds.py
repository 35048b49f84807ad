"""The CRDs in deploy/crds accept Karpenter's own manifests and reject invalid ones at the API."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from activities.kubernetes import custom_objects
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import Invalid
from activities.kubernetes.resources import EC2NODECLASS, NODECLAIM, NODEPOOL, CustomResource

MANIFESTS = Path(__file__).parent / "manifests"
KINDS = {r.kind: r for r in (NODEPOOL, NODECLAIM, EC2NODECLASS)}


def _docs(path: Path, suffix: str) -> list[dict[str, Any]]:
    """The file's objects, renamed with ``suffix`` so tests sharing the cluster never collide."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for doc in docs:
        doc["metadata"]["name"] += f"-{suffix}"
        ref = doc.get("spec", {}).get("template", {}).get("spec", {}).get("nodeClassRef")
        if ref:
            ref["name"] += f"-{suffix}"
    return docs


@pytest.fixture
def created(admin: Kube) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    """Create objects as admin (Joinery may not create NodePools); delete them afterwards."""
    made: list[tuple[CustomResource, str]] = []

    def create(doc: dict[str, Any]) -> dict[str, Any]:
        crd = KINDS[doc["kind"]]
        obj = custom_objects.create(admin, crd, doc)
        made.append((crd, obj["metadata"]["name"]))
        return obj

    yield create
    for crd, name in made:
        custom_objects.delete(admin, crd, name)


@pytest.mark.parametrize("manifest", sorted(p.name for p in MANIFESTS.glob("*.yaml")))
def test_karpenter_examples_are_accepted(
    manifest: str, created: Callable[[dict[str, Any]], dict[str, Any]], kube: Kube, unique: str
) -> None:
    for doc in _docs(MANIFESTS / manifest, unique):
        stored = created(doc)
        # Joinery's own identity can read what was applied, and it round-trips unpruned.
        read = custom_objects.get(kube, KINDS[doc["kind"]], stored["metadata"]["name"])
        assert _contains(read["spec"], doc["spec"]), (doc["spec"], read["spec"])


def _contains(stored: Any, given: Any) -> bool:
    """``given`` survives in ``stored`` (which may have defaults added)."""
    if isinstance(given, dict):
        return isinstance(stored, dict) and all(
            k in stored and _contains(stored[k], v) for k, v in given.items()
        )
    if isinstance(given, list):
        return (
            isinstance(stored, list)
            and len(stored) == len(given)
            and all(_contains(s, g) for s, g in zip(stored, given, strict=True))
        )
    return bool(stored == given)


def test_nodepool_defaults_match_karpenter(
    created: Callable[[dict[str, Any]], dict[str, Any]], unique: str
) -> None:
    (pool,) = _docs(MANIFESTS / "minimal.yaml", unique)
    stored = created(pool)
    assert stored["spec"]["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "0s",
        "budgets": [{"nodes": "10%"}],
    }
    assert stored["spec"]["template"]["spec"]["expireAfter"] == "720h"


def test_budget_nodes_default_and_ec2nodeclass_metadata_defaults(
    created: Callable[[dict[str, Any]], dict[str, Any]], unique: str
) -> None:
    (pool,) = _docs(MANIFESTS / "minimal.yaml", unique)
    pool["spec"]["disruption"] = {"budgets": [{"nodes": "3"}, {}]}
    stored = created(pool)
    assert stored["spec"]["disruption"]["budgets"] == [{"nodes": "3"}, {"nodes": "10%"}]
    assert stored["spec"]["disruption"]["consolidateAfter"] == "0s"

    _, nodeclass = _docs(MANIFESTS / "general-purpose.yaml", unique + "x")
    stored = created(nodeclass)
    assert stored["spec"]["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }


def _requirements(pool: dict[str, Any]) -> list[dict[str, Any]]:
    return pool["spec"]["template"]["spec"]["requirements"]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(pool: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        node = pool
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value

    return mutate


def _requirement(req: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda pool: _requirements(pool).append(req)


INVALID_NODEPOOLS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "in-without-values",
        _requirement({"key": "example.com/a", "operator": "In"}),
        "'In' must have a value",
    ),
    (
        "gt-two-values",
        _requirement({"key": "example.com/a", "operator": "Gt", "values": ["1", "2"]}),
        "single positive integer",
    ),
    (
        "lt-not-integer",
        _requirement({"key": "example.com/a", "operator": "Lt", "values": ["x"]}),
        "single positive integer value",
    ),
    (
        "gte-negative",
        _requirement({"key": "example.com/a", "operator": "Gte", "values": ["-1"]}),
        "single positive integer",
    ),
    (
        "unknown-operator",
        _requirement({"key": "example.com/a", "operator": "Like", "values": ["a"]}),
        "Unsupported value",
    ),
    (
        "minvalues-over-50",
        _requirement({"key": "example.com/a", "operator": "Exists", "minValues": 51}),
        "minValues",
    ),
    (
        "minvalues-zero",
        _requirement({"key": "example.com/a", "operator": "Exists", "minValues": 0}),
        "minValues",
    ),
    (
        "minvalues-above-values",
        _requirement({"key": "example.com/a", "operator": "In", "values": ["a"], "minValues": 2}),
        "at least that many values",
    ),
    (
        "restricted-nodepool-label",
        _requirement({"key": "karpenter.sh/nodepool", "operator": "In", "values": ["x"]}),
        'label "karpenter.sh/nodepool" is restricted',
    ),
    (
        "restricted-karpenter-domain",
        _requirement({"key": "karpenter.sh/custom", "operator": "Exists"}),
        'label domain "karpenter.sh" is restricted',
    ),
    (
        "restricted-subdomain",
        _requirement({"key": "team.karpenter.sh/x", "operator": "Exists"}),
        'label domain "karpenter.sh" is restricted',
    ),
    (
        "restricted-hostname",
        _requirement({"key": "kubernetes.io/hostname", "operator": "Exists"}),
        'label "kubernetes.io/hostname" is restricted',
    ),
    (
        "bad-value",
        _requirement({"key": "example.com/a", "operator": "In", "values": ["not a label value"]}),
        "values",
    ),
    (
        "template-label-hostname",
        _set("spec.template.metadata.labels", {"kubernetes.io/hostname": "x"}),
        "restricted",
    ),
    (
        "template-label-karpenter",
        _set("spec.template.metadata.labels", {"karpenter.sh/foo": "x"}),
        'label domain "karpenter.sh" is restricted',
    ),
    ("weight-over-100", _set("spec.weight", 101), "spec.weight"),
    ("weight-zero", _set("spec.weight", 0), "spec.weight"),
    ("expire-after-days", _set("spec.template.spec.expireAfter", "30d"), "expireAfter"),
    ("consolidate-after-bad", _set("spec.disruption.consolidateAfter", "soon"), "consolidateAfter"),
    (
        "policy-unknown",
        _set("spec.disruption.consolidationPolicy", "Sometimes"),
        "consolidationPolicy",
    ),
    ("budget-nodes-words", _set("spec.disruption.budgets", [{"nodes": "ten"}]), "nodes"),
    (
        "budget-nodes-over-100-percent",
        _set("spec.disruption.budgets", [{"nodes": "101%"}]),
        "nodes",
    ),
    (
        "budget-schedule-without-duration",
        _set("spec.disruption.budgets", [{"nodes": "0", "schedule": "@daily"}]),
        "'schedule' must be set with 'duration'",
    ),
    (
        "budget-duration-without-schedule",
        _set("spec.disruption.budgets", [{"nodes": "0", "duration": "1h"}]),
        "'schedule' must be set with 'duration'",
    ),
    (
        "budget-reason-unknown",
        _set("spec.disruption.budgets", [{"nodes": "1", "reasons": ["Bored"]}]),
        "reasons",
    ),
    (
        "taint-effect-unknown",
        _set("spec.template.spec.taints", [{"key": "a", "effect": "Sometimes"}]),
        "effect",
    ),
    (
        "nodeclassref-missing",
        lambda p: p["spec"]["template"]["spec"].pop("nodeClassRef"),
        "nodeClassRef",
    ),
    (
        "nodeclassref-empty-kind",
        _set("spec.template.spec.nodeClassRef.kind", ""),
        "kind may not be empty",
    ),
    (
        "requirements-missing",
        lambda p: p["spec"]["template"]["spec"].pop("requirements"),
        "requirements",
    ),
    ("limits-not-quantity", _set("spec.limits", {"cpu": "lots"}), "limits"),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [pytest.param(m, e, id=i) for i, m, e in INVALID_NODEPOOLS],
)
def test_invalid_nodepools_are_rejected(
    admin: Kube, unique: str, mutate: Callable[[dict[str, Any]], None], expected: str
) -> None:
    (pool,) = _docs(MANIFESTS / "minimal.yaml", unique)
    mutate(pool)
    with pytest.raises(Invalid) as caught:
        custom_objects.create(admin, NODEPOOL, pool)
    assert caught.value.status == 422
    assert expected in caught.value.message


def _nodeclass(unique: str) -> dict[str, Any]:
    _, nodeclass = _docs(MANIFESTS / "general-purpose.yaml", unique)
    return nodeclass


INVALID_NODECLASSES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "role-and-profile",
        _set("spec.instanceProfile", "profile"),
        "exactly one of ['role', 'instanceProfile']",
    ),
    (
        "neither-role-nor-profile",
        lambda n: n["spec"].pop("role"),
        "exactly one of ['role', 'instanceProfile']",
    ),
    (
        "alias-with-other-term",
        _set("spec.amiSelectorTerms", [{"alias": "al2023@latest"}, {"id": "ami-123"}]),
        "'alias' is mutually exclusive",
    ),
    (
        "alias-bad-family",
        _set("spec.amiSelectorTerms", [{"alias": "ubuntu@latest"}]),
        "family is not supported",
    ),
    (
        "windows-pinned",
        _set("spec.amiSelectorTerms", [{"alias": "windows2022@v1"}]),
        "windows families may only specify version 'latest'",
    ),
    (
        "no-family-without-alias",
        _set("spec.amiSelectorTerms", [{"id": "ami-123"}]),
        "must specify amiFamily",
    ),
    (
        "family-contradicts-alias",
        _set("spec.amiFamily", "Bottlerocket"),
        "amiFamily must be 'AL2023' or 'Custom'",
    ),
    (
        "empty-subnet-terms",
        _set("spec.subnetSelectorTerms", []),
        "subnetSelectorTerms cannot be empty",
    ),
    (
        "subnet-term-empty",
        _set("spec.subnetSelectorTerms", [{}]),
        "expected at least one, got none",
    ),
    (
        "empty-tag-value",
        _set("spec.securityGroupSelectorTerms", [{"tags": {"a": ""}}]),
        "empty tag keys or values",
    ),
    ("restricted-tag", _set("spec.tags", {"karpenter.sh/nodepool": "x"}), "restricted tag"),
    (
        "hop-limit",
        _set("spec.metadataOptions", {"httpPutResponseHopLimit": 65}),
        "httpPutResponseHopLimit",
    ),
    (
        "two-root-volumes",
        _set(
            "spec.blockDeviceMappings",
            [
                {"rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
                {"rootVolume": True, "ebs": {"volumeSize": "20Gi"}},
            ],
        ),
        "only one blockDeviceMappings with rootVolume",
    ),
    (
        "volume-too-big",
        _set("spec.blockDeviceMappings", [{"ebs": {"volumeSize": "100Ti"}}]),
        "volumeSize",
    ),
    (
        "gc-thresholds",
        _set("spec.kubelet", {"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 60}),
        "imageGCHighThresholdPercent must be greater",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [pytest.param(m, e, id=i) for i, m, e in INVALID_NODECLASSES],
)
def test_invalid_ec2nodeclasses_are_rejected(
    admin: Kube, unique: str, mutate: Callable[[dict[str, Any]], None], expected: str
) -> None:
    nodeclass = _nodeclass(unique)
    mutate(nodeclass)
    with pytest.raises(Invalid) as caught:
        custom_objects.create(admin, EC2NODECLASS, nodeclass)
    assert expected in caught.value.message


def test_nodepool_nodeclassref_group_is_immutable(
    admin: Kube, created: Callable[[dict[str, Any]], dict[str, Any]], unique: str
) -> None:
    (pool,) = _docs(MANIFESTS / "minimal.yaml", unique)
    stored = created(pool)
    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["nodeClassRef"]["group"] = "example.com"
    with pytest.raises(Invalid) as caught:
        custom_objects.replace(admin, NODEPOOL, changed)
    assert "nodeClassRef.group is immutable" in caught.value.message
