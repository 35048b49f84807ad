"""Builders for running clusters (managed nodes with their claims, bound pods, PDBs, pools
with a disruption block) and ``disrupt()``: manifests in, the ``joinery plan --disruption``
JSON out, with the contract's rules checked on every call."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from models.catalog import load_catalog
from models.policies import Policies
from scheduling.disruption.report import decision_to_dict
from scheduling.inputs import Document
from scheduling.lowerbound import lower_bound
from scheduling.report import plan_to_dict
from tests.support.catalogs import TYPES, ZA, catalog
from tests.support.labels import ARCH, CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL, ZONE
from tests.support.manifests import Manifest, node, nodepool, pod, req
from tests.support.plans import check_output_rules

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
LONG_AGO = "2026-01-01T00:00:00Z"
INITIALIZED = "karpenter.sh/initialized"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"


def pool(
    name: str = "default",
    *,
    policy: str = "WhenEmptyOrUnderutilized",
    consolidate_after: str = "0s",
    budgets: Sequence[Mapping[str, Any]] | None = None,
    **kw: Any,
) -> Manifest:
    """A NodePool with a ``disruption`` block (other arguments as ``manifests.nodepool``)."""
    body = nodepool(name, **kw)
    body["spec"]["disruption"] = {
        "consolidationPolicy": policy,
        "consolidateAfter": consolidate_after,
    }
    if budgets is not None:
        body["spec"]["disruption"]["budgets"] = [dict(b) for b in budgets]
    return body


def managed(
    name: str,
    instance_type: str = "m5.xlarge",
    *,
    nodepool_name: str = "default",
    zone: str = ZA,
    capacity_type: str = "on-demand",
    initialized: bool = True,
    ready: bool = True,
    deleting: bool = False,
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Manifest:
    """A managed Node whose capacity is its catalog type's."""
    cpu, mem, pods, arch = TYPES[instance_type][:4]
    extra = {INITIALIZED: "true"} if initialized else {}
    body = node(
        name,
        cpu,
        mem,
        pods,
        zone=zone,
        arch=arch,
        instance_type=instance_type,
        capacity_type=capacity_type,
        nodepool=nodepool_name,
        labels={**extra, **(labels or {})},
        deleting=deleting,
    )
    body["metadata"]["creationTimestamp"] = LONG_AGO
    if annotations:
        body["metadata"]["annotations"] = dict(annotations)
    body["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return body


def claim_for(
    node_body: Mapping[str, Any],
    *,
    created: str = LONG_AGO,
    last_pod_event: str | None = None,
    annotations: Mapping[str, str] | None = None,
    expire_after: str | None = "Never",
    deleting: bool = False,
) -> Manifest:
    """The NodeClaim behind a managed Node (matched by ``status.nodeName``); it never expires
    unless ``expire_after`` says otherwise, so disruption costs are the pods' alone."""
    labels = node_body["metadata"]["labels"]
    meta: dict[str, Any] = {
        "name": f"{node_body['metadata']['name']}-claim",
        "labels": {NODEPOOL: labels[NODEPOOL]},
        "creationTimestamp": created,
        "annotations": dict(annotations or {}),
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-11-23T11:59:00Z"
    spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
        "requirements": [
            {"key": INSTANCE_TYPE, "operator": "In", "values": [labels[INSTANCE_TYPE]]},
            {"key": ZONE, "operator": "In", "values": [labels[ZONE]]},
            {"key": CAPACITY_TYPE, "operator": "In", "values": [labels[CAPACITY_TYPE]]},
        ],
    }
    if expire_after is not None:
        spec["expireAfter"] = expire_after
    status: dict[str, Any] = {
        "nodeName": node_body["metadata"]["name"],
        "providerID": node_body["spec"]["providerID"],
    }
    if last_pod_event:
        status["lastPodEventTime"] = last_pod_event
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


OD_AMD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
ALL = [{"nodes": "100%"}]  # a budget that never stops a command


def node_and_claim(
    name: str, instance_type: str = "m5.xlarge", *, last_pod_event: str | None = None, **kw: Any
) -> list[Manifest]:
    """A managed Node (``managed``'s keywords) and its NodeClaim."""
    body = managed(name, instance_type, **kw)
    return [body, claim_for(body, last_pod_event=last_pod_event)]


def bound(
    name: str,
    node_name: str,
    cpu: str = "500m",
    memory: str = "1Gi",
    *,
    owner_kind: str | None = "ReplicaSet",
    annotations: Mapping[str, str] | None = None,
    started: str | None = LONG_AGO,
    phase: str = "Running",
    **kw: Any,
) -> Manifest:
    """A Running pod bound to ``node_name``."""
    body = pod(name, cpu, memory, node_name=node_name, owner_kind=owner_kind, **kw)
    if annotations:
        body["metadata"]["annotations"] = dict(annotations)
    body["status"] = {"phase": phase}
    if started:
        body["status"]["startTime"] = started
    return body


def pdb(
    name: str,
    match_labels: Mapping[str, str],
    *,
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    namespace: str = "default",
) -> Manifest:
    spec: dict[str, Any] = {"selector": {"matchLabels": dict(match_labels)}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _managed_names(docs: Sequence[Mapping[str, Any]]) -> set[str]:
    pools = {d["metadata"]["name"] for d in docs if d.get("kind") == "NodePool"}
    return {
        d["metadata"]["name"]
        for d in docs
        if d.get("kind") == "Node" and d["metadata"].get("labels", {}).get(NODEPOOL) in pools
    }


def check_disruption_rules(docs: Sequence[Mapping[str, Any]], out: Mapping[str, Any]) -> None:
    """The rules DESIGN.md states for every ``--disruption`` output."""
    d = out["disruption"]
    named: list[str] = [n for c in d["commands"] for n in c["nodes"]]
    named += [v["node"] for v in d["blocked"]] + [v["node"] for v in d["kept"]]
    assert sorted(named) == sorted(_managed_names(docs)), "every managed node exactly once"
    for v in d["blocked"] + d["kept"]:
        assert v["reason"] and "\n" not in v["reason"]
    removed = {n for c in d["commands"] for n in c["nodes"]}
    for c in d["commands"]:
        assert c["reason"] in ("Empty", "Underutilized", "Drifted")
        for dest in c["pods"].values():
            assert dest not in removed, f"{dest} is both removed and a destination"
            if dest.startswith("replacement-"):
                assert int(dest.split("-", 1)[1]) < len(c["replacements"])
        if c["reason"] == "Empty":
            assert not c["replacements"] and not c["pods"]
        if c["reason"] == "Underutilized":
            assert len(c["replacements"]) <= 1
            assert c["savingsPerHour"] > 0
        for r in c["replacements"]:
            assert r["instanceTypes"] and r["zones"] and r["capacityTypes"]
    cost = d["costPerHour"]
    delta = sum(c["savingsPerHour"] for c in d["commands"])
    assert abs(cost["before"] - delta - cost["after"]) < 1e-4


def disrupt(
    docs: Sequence[Mapping[str, Any]],
    catalog_doc: Mapping[str, Any] | None = None,
    now: datetime = NOW,
    pool_catalogs: Mapping[str, Mapping[str, Any]] | None = None,
    policies: Policies | None = None,
) -> dict[str, Any]:
    """The ``joinery plan --disruption -o json`` object for these manifests at ``now``
    (``pool_catalogs``: pools' own catalogs, pool name -> catalog document; ``policies``:
    Karpenter's policies and feature gates, its defaults when None)."""
    from scheduling.disruption.round import run_round

    result = run_round(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(copy.deepcopy(dict(catalog_doc if catalog_doc is not None else catalog()))),
        now,
        {p: load_catalog(copy.deepcopy(dict(doc))) for p, doc in (pool_catalogs or {}).items()},
        policies,
    )
    out = plan_to_dict(result.plan, lower_bound(result.solver, result.plan.scheduled))
    check_output_rules(docs, out)
    out["disruption"] = decision_to_dict(result.decision)
    check_disruption_rules(docs, out)
    return out


def blocked(out: Mapping[str, Any]) -> dict[str, str]:
    return {v["node"]: v["reason"] for v in out["disruption"]["blocked"]}


def kept(out: Mapping[str, Any]) -> dict[str, str]:
    return {v["node"]: v["reason"] for v in out["disruption"]["kept"]}


def commands(out: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(out["disruption"]["commands"])


def disrupted(out: Mapping[str, Any]) -> dict[str, str]:
    """Node → the reason of the command that removes it."""
    return {n: c["reason"] for c in commands(out) for n in c["nodes"]}
