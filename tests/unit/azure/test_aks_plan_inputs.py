"""AKSNodeClasses among `joinery plan` inputs: any damaged class is refused in one line that
names its document (never another exception), and the one-provider rule reads pools and
classes alike."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest

from scheduling.inputs import Document
from tests.unit.azure.test_aksnodeclass import _full
from worker.plan_inputs import aks_nodeclasses, plan_catalogs
from worker.usage import UsageError

ODD_VALUES: list[Any] = [
    None,
    1,
    -5,
    10**30,
    1.5,
    "x",
    "",
    True,
    [],
    {},
    [1],
    {"a": 1},
    {"a": None},
    "1 2",
    ["a"],
    float("nan"),
]


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if prefix:
        yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def _implemented() -> dict[str, Any]:
    """Every field set that Joinery implements (the class is valid and would be Ready)."""
    body = _full()
    spec = body["spec"]
    for key in ("localDNS", "artifactStreaming", "linuxOSConfig"):
        spec.pop(key, None)
    for key in ("cpuManagerPolicy", "topologyManagerPolicy", "allowedUnsafeSysctls", "failSwapOn"):
        spec["kubelet"].pop(key, None)
    return body


def test_damaged_classes_are_one_line_usage_errors() -> None:
    rng = random.Random(31)
    base = _implemented()
    assert aks_nodeclasses.parse(Document(base, "in.yaml document 4")).name == "full"
    paths = list(_paths(base))
    refused = 0
    for _ in range(600):
        body = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(paths)
            node: Any = body
            try:
                for key in path[:-1]:
                    node = node[key]
                node[path[-1]] = rng.choice(ODD_VALUES)
            except (KeyError, IndexError, TypeError):
                continue  # an earlier change removed this path
        try:
            aks_nodeclasses.parse(Document(body, "in.yaml document 4"))
        except UsageError as exc:
            refused += 1
            assert "\n" not in str(exc) and str(exc).startswith("in.yaml document 4 (")
    assert 100 < refused < 600  # both outcomes are exercised


def _doc(kind: str, api: str, name: str, **body: Any) -> Document:
    return Document({"apiVersion": api, "kind": kind, "metadata": {"name": name}, **body}, name)


def _pool(name: str, group: str, kind: str) -> Document:
    ref = {"group": group, "kind": kind, "name": "c"}
    return _doc(
        "NodePool", "karpenter.sh/v1", name, spec={"template": {"spec": {"nodeClassRef": ref}}}
    )


AKS_POOL = _pool("aks", "karpenter.azure.com", "AKSNodeClass")
EC2_POOL = _pool("ec2", "karpenter.k8s.aws", "EC2NodeClass")
KWOK_POOL = _pool("kwok", "karpenter.kwok.sh", "KWOKNodeClass")
AKS_CLASS = _doc("AKSNodeClass", "karpenter.azure.com/v1beta1", "c")
EC2_CLASS = _doc("EC2NodeClass", "karpenter.k8s.aws/v1", "c")


def _provider(*docs: Document, asked: str | None = None) -> str | None:
    split = plan_catalogs.split_inputs(docs)
    return aks_nodeclasses.cluster_provider(split.pools, split.ec2, split.aks, asked)


def test_one_provider_per_cluster() -> None:
    assert _provider(AKS_POOL, AKS_CLASS) == "azure"
    assert _provider(EC2_POOL, EC2_CLASS) == "aws"
    assert _provider(KWOK_POOL) is None
    assert _provider(KWOK_POOL, asked="azure") == "azure"
    for docs in ((AKS_POOL, EC2_POOL), (AKS_POOL, EC2_CLASS), (EC2_POOL, AKS_CLASS)):
        with pytest.raises(UsageError, match="inputs mix providers"):
            _provider(*docs)
    with pytest.raises(UsageError, match="belongs to azure, not to --provider aws"):
        _provider(AKS_POOL, asked="aws")


def test_split_keeps_pools_and_takes_classes_out() -> None:
    pod = _doc("Pod", "v1", "p")
    split = plan_catalogs.split_inputs([AKS_POOL, AKS_CLASS, EC2_CLASS, pod])
    assert split.documents == [AKS_POOL, pod] and split.pools == [AKS_POOL]
    assert set(split.aks) == {"c"} and set(split.ec2) == {"c"}
    # A kind of another group is not a node class of ours: the planner says it ignores it.
    other = _doc("AKSNodeClass", "example.com/v1", "x")
    assert plan_catalogs.split_inputs([other]).documents == [other]
