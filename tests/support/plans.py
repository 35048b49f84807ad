"""``plan()``: manifests in, DESIGN.md JSON out, and helpers that read that JSON.

``plan`` also checks the output rules that hold for every plan (each pending pod exactly once,
cost arithmetic), so every scenario that uses it tests them too.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from models.catalog import load_catalog
from models.policies import Policies
from scheduling.inputs import Document, build_problem
from scheduling.lowerbound import lower_bound
from scheduling.report import plan_to_dict
from scheduling.solver import Solver
from tests.support.catalogs import catalog

# ---------------------------------------------------------------------------------- plan


def _going_nodes(docs: Sequence[Mapping[str, Any]]) -> set[str]:
    """Nodes going away, as Karpenter's cluster state marks them for deletion: the Node
    deleting, or the NodeClaim whose ``status.nodeName`` names it deleting or with
    ``InstanceTerminating`` True."""
    out = set()
    for d in docs:
        meta, status = d.get("metadata") or {}, d.get("status") or {}
        if d.get("kind") == "Node" and meta.get("deletionTimestamp"):
            out.add(meta["name"])
        if d.get("kind") == "NodeClaim" and status.get("nodeName"):
            terminating = any(
                c.get("type") == "InstanceTerminating" and c.get("status") == "True"
                for c in status.get("conditions") or []
            )
            if meta.get("deletionTimestamp") or terminating:
                out.add(status["nodeName"])
    return out


def _pending_keys(docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Pods the output must account for: unbound ones, and the pods of nodes going away that
    Karpenter reschedules (``IsReschedulable``, and no ``do-not-disrupt: "true"``): not a
    DaemonSet's or a mirror pod, not terminating unless a StatefulSet's."""
    going = _going_nodes(docs)
    out = []
    for d in docs:
        if d.get("kind") != "Pod":
            continue
        meta, spec = d["metadata"], d.get("spec") or {}
        if (d.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        owners = [o.get("kind") for o in meta.get("ownerReferences") or []]
        annotations = meta.get("annotations") or {}
        bound = spec.get("nodeName")
        if bound:
            moves = (
                bound in going
                and "DaemonSet" not in owners
                and "Node" not in owners
                and "kubernetes.io/config.mirror" not in annotations
                and (not meta.get("deletionTimestamp") or "StatefulSet" in owners)
                and annotations.get("karpenter.sh/do-not-disrupt") != "true"
            )
            if not moves:
                continue
        out.append(f"{meta.get('namespace') or 'default'}/{meta['name']}")
    return out


def check_output_rules(docs: Sequence[Mapping[str, Any]], out: Mapping[str, Any]) -> None:
    """The rules DESIGN.md states for every plan."""
    placed: list[str] = []
    for c in out["nodeClaims"]:
        placed += c["pods"]
    for n in out["existingNodes"]:
        placed += n["pods"]
    placed += [u["pod"] for u in out["unschedulable"]]
    assert sorted(placed) == sorted(_pending_keys(docs)), "every pending pod exactly once"
    total = round(sum(c["price"] for c in out["nodeClaims"]), 6)
    assert abs(out["cost"]["perHour"] - total) < 1e-6
    assert out["cost"]["lowerBound"] <= out["cost"]["perHour"] + 1e-9
    assert out["cost"]["lowerBound"] >= 0
    for c in out["nodeClaims"]:
        assert c["instanceTypes"], "a claim names at least one instance type"
        assert c["zones"] and c["capacityTypes"]
        assert int(c["requests"]["pods"]) >= len(c["pods"])


def plan(
    docs: Sequence[Mapping[str, Any]],
    catalog_doc: Mapping[str, Any] | None = None,
    pool_catalogs: Mapping[str, Mapping[str, Any]] | None = None,
    policies: Policies | None = None,
) -> dict[str, Any]:
    """Run the solver on the manifests; returns the `joinery plan -o json` object.
    ``pool_catalogs`` gives pools their own catalogs (pool name -> catalog document; pools
    given the same document share one list, as pools whose NodeClasses see alike do)."""
    loaded: dict[int, Any] = {}
    for doc in (pool_catalogs or {}).values():
        if id(doc) not in loaded:
            loaded[id(doc)] = load_catalog(copy.deepcopy(dict(doc)))
    parsed = build_problem(
        [Document(copy.deepcopy(dict(d)), f"doc {i}") for i, d in enumerate(docs)],
        load_catalog(copy.deepcopy(dict(catalog_doc if catalog_doc is not None else catalog()))),
        {pool: loaded[id(doc)] for pool, doc in (pool_catalogs or {}).items()},
        policies,
    )
    solver = Solver(parsed.problem)
    result = solver.solve()
    out = plan_to_dict(result, lower_bound(solver, result.scheduled))
    check_output_rules(docs, out)
    return out


# ----------------------------------------------------------------------- reading output


def where(out: Mapping[str, Any]) -> dict[str, str]:
    """Pod key → ``claim<i>`` (index into nodeClaims), ``node:<name>`` or ``unschedulable``."""
    loc: dict[str, str] = {}
    for i, c in enumerate(out["nodeClaims"]):
        for p in c["pods"]:
            loc[p] = f"claim{i}"
    for n in out["existingNodes"]:
        for p in n["pods"]:
            loc[p] = f"node:{n['name']}"
    for u in out["unschedulable"]:
        loc[u["pod"]] = "unschedulable"
    return loc


def claim_of(out: Mapping[str, Any], pod_key: str) -> dict[str, Any]:
    for c in out["nodeClaims"]:
        if pod_key in c["pods"]:
            return dict(c)
    raise AssertionError(f"{pod_key} is not on a new claim: {where(out).get(pod_key)}")


def reason(out: Mapping[str, Any], pod_key: str) -> str:
    for u in out["unschedulable"]:
        if u["pod"] == pod_key:
            return str(u["reason"])
    raise AssertionError(f"{pod_key} is not unschedulable: {where(out).get(pod_key)}")


def unschedulable(out: Mapping[str, Any]) -> list[str]:
    return [u["pod"] for u in out["unschedulable"]]


def requirement(claim: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    for r in claim["requirements"]:
        if r["key"] == key:
            return dict(r)
    return None
