"""Judging Joinery's answers (the JSON of ``joinery plan`` and ``--disruption``) with the
oracle: build the cluster the answer would leave, then ask the filter whether every pod it
places is admitted where it lands, and check the round's budgets, PDBs and partition rule.

Each check returns None or one line saying what is wrong.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from tests.oracle.checker import admits, first_failure
from tests.oracle.cluster import Cluster, Obj, bound_to, key_of, name_of, namespace_of, pod_labels
from tests.oracle.generate import (
    CAPACITY_TYPE,
    NODEPOOL,
    allocatable,
    daemon_pod,
    type_labels,
)
from tests.oracle.objects import ZONE, node
from tests.oracle.selectors import label_selector_matches, requirement_matches

REASONS = ("Empty", "Underutilized", "Drifted")


def _kind(objects: Sequence[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o.get("kind") == kind]


def _is_daemon(p: Obj) -> bool:
    refs = (p.get("metadata") or {}).get("ownerReferences") or []
    return any(r.get("kind") == "DaemonSet" and r.get("controller") for r in refs)


def claim_node(
    claim: Mapping[str, Any], name: str, objects: Sequence[Obj], catalog: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """The Node a claim becomes when its cheapest type launches in its cheapest offering
    within the claim's zones and capacity types: labels from the type, the offering, the
    pool's template and the claim's single-valued ``In`` requirements; the pool's taints;
    the type's allocatable. Returns (node, None) or (None, what is wrong with the claim)."""
    types = {t["name"]: t for t in catalog["instanceTypes"]}
    if not claim["instanceTypes"]:
        return None, f"claim {name} lists no instance type"
    entry = types.get(claim["instanceTypes"][0])
    if entry is None:
        return None, f"claim {name}: type {claim['instanceTypes'][0]} not in the catalog"
    offers = [
        o
        for o in entry["offerings"]
        if o["zone"] in claim["zones"]
        and o["capacityType"] in claim["capacityTypes"]
        and o.get("available", True)
    ]
    if not offers:
        return None, f"claim {name}: {entry['name']} has no available offering in its zones"
    offer = min(offers, key=lambda o: (o["price"], o["zone"], o["capacityType"]))
    pool = next(p for p in _kind(objects, "NodePool") if name_of(p) == claim["nodePool"])
    tmpl = pool["spec"]["template"]
    labels = {
        **type_labels(entry),
        ZONE: offer["zone"],
        CAPACITY_TYPE: offer["capacityType"],
        NODEPOOL: claim["nodePool"],
        **((tmpl.get("metadata") or {}).get("labels") or {}),
    }
    for r in claim["requirements"]:
        if r["operator"] == "In" and len(r.get("values") or []) == 1:
            labels.setdefault(r["key"], r["values"][0])
    alloc = allocatable(entry)
    extra = {k: v for k, v in alloc.items() if k not in ("cpu", "memory", "pods")}
    body = node(
        name,
        labels,
        taints=(tmpl.get("spec") or {}).get("taints") or [],
        cpu=alloc["cpu"],
        memory=alloc["memory"],
        pods=int(alloc["pods"]),
        extra=extra,
    )
    return body, None


def _add_node_with_daemons(cluster: Cluster, body: dict[str, Any], objects: Sequence[Obj]) -> None:
    """A new node, with the pods of every DaemonSet that runs on it."""
    name = name_of(body)
    cluster.nodes[name] = body
    for ds in _kind(objects, "DaemonSet"):
        dp = daemon_pod(ds, name)
        if admits(dp, name, cluster) is None:
            cluster.pods.append(dp)


def judge_plan(
    objects: Sequence[Obj], catalog: Mapping[str, Any], out: Mapping[str, Any]
) -> str | None:
    """Every pending pod reported once; every placed pod admitted on its claim's cheapest
    type or on the existing node, all placements judged together (final state)."""
    pending = [key_of(p) for p in _kind(objects, "Pod") if not bound_to(p)]
    named = [k for c in out["nodeClaims"] for k in c["pods"]]
    named += [k for e in out["existingNodes"] for k in e["pods"]]
    named += [u["pod"] for u in out["unschedulable"]]
    counts = Counter(named)
    for k in pending:
        if counts[k] != 1:
            return f"pod {k} appears {counts[k]} times in the plan"
    if set(counts) - set(pending):
        return f"the plan names pods that were not pending: {sorted(set(counts) - set(pending))}"
    cluster = Cluster.from_objects(objects)
    by_key = {key_of(p): p for p in _kind(objects, "Pod")}
    placements: list[tuple[Obj, str]] = []
    for i, claim in enumerate(out["nodeClaims"]):
        name = f"claim-{i}"
        body, why = claim_node(claim, name, objects, catalog)
        if body is None:
            return why
        _add_node_with_daemons(cluster, body, objects)
        placements += [(by_key[k], name) for k in claim["pods"]]
    for e in out["existingNodes"]:
        placements += [(by_key[k], e["name"]) for k in e["pods"]]
    return first_failure(cluster, placements, final_state=True)


def _ready(n: Obj) -> bool:
    conds = (n.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def _budget_value(raw: Any, total: int) -> int:
    text = str(raw)
    if text.endswith("%"):
        return math.ceil(int(text[:-1]) * total / 100)
    return int(text)


def budget_failure(objects: Sequence[Obj], commands: Sequence[Mapping[str, Any]]) -> str | None:
    """Per pool and budget (default ``nodes: 10%``), the round's command nodes whose reason
    the budget covers, plus the pool's nodes already deleting or NotReady, stay within the
    budget (a percentage of the pool's nodes, rounded up)."""
    nodes = {name_of(n): n for n in _kind(objects, "Node")}
    for pool in _kind(objects, "NodePool"):
        pname = name_of(pool)
        members = [
            n for n in nodes.values() if (n["metadata"].get("labels") or {}).get(NODEPOOL) == pname
        ]
        busy = sum(1 for n in members if n["metadata"].get("deletionTimestamp") or not _ready(n))
        budgets = (pool["spec"].get("disruption") or {}).get("budgets") or [{"nodes": "10%"}]
        for b in budgets:
            if b.get("schedule"):
                continue  # the generator writes none
            reasons = b.get("reasons") or REASONS
            used = sum(
                1
                for c in commands
                if c["reason"] in reasons
                for n in c["nodes"]
                if (nodes[n]["metadata"].get("labels") or {}).get(NODEPOOL) == pname
            )
            allowed = max(_budget_value(b["nodes"], len(members)) - busy, 0)
            if used > allowed:
                return (
                    f"pool {pname}: budget {b} allows {allowed} node(s) now, "
                    f"the round disrupts {used}"
                )
    return None


def pdb_failure(
    objects: Sequence[Obj], cluster: Cluster, commands: Sequence[Mapping[str, Any]]
) -> str | None:
    """The round evicts no more of a PDB's pods than it allows now."""
    gone = {n for c in commands for n in c["nodes"]}
    for pdb in _kind(objects, "PodDisruptionBudget"):
        spec = pdb["spec"]
        ns = namespace_of(pdb)
        chosen = [
            p
            for p in cluster.pods
            if namespace_of(p) == ns and label_selector_matches(spec.get("selector"), pod_labels(p))
        ]
        expected = len(chosen)
        healthy = sum(1 for p in chosen if _ready(cluster.nodes[str(bound_to(p))]))
        if "minAvailable" in spec:
            allowed = healthy - _budget_value(spec["minAvailable"], expected)
        else:
            allowed = _budget_value(spec["maxUnavailable"], expected) - (expected - healthy)
        evicted = sum(1 for p in chosen if bound_to(p) in gone)
        if evicted > max(allowed, 0):
            return (
                f"PDB {ns}/{name_of(pdb)} allows {max(allowed, 0)} eviction(s), "
                f"the round evicts {evicted}"
            )
    return None


def partition_failure(managed: Sequence[str], disruption: Mapping[str, Any]) -> str | None:
    """commands, blocked and kept name every managed node exactly once; no command node is
    a destination."""
    names = [n for c in disruption["commands"] for n in c["nodes"]]
    names += [b["node"] for b in disruption["blocked"]]
    names += [k["node"] for k in disruption["kept"]]
    counts = Counter(names)
    twice = sorted(n for n, k in counts.items() if k > 1)
    if twice:
        return f"nodes named more than once: {twice}"
    if set(counts) != set(managed):
        return (
            f"managed nodes {sorted(set(managed) - set(counts))} unnamed, "
            f"{sorted(set(counts) - set(managed))} named but not managed"
        )
    gone = {n for c in disruption["commands"] for n in c["nodes"]}
    for c in disruption["commands"]:
        for pod_key, dest in c["pods"].items():
            if dest in gone:
                return f"pod {pod_key} moves to {dest}, a node this round removes"
    return None


def apply_round(
    objects: Sequence[Obj], catalog: Mapping[str, Any], disruption: Mapping[str, Any]
) -> tuple[Cluster, list[tuple[Obj, str]], str | None]:
    """The cluster after the round's commands: their nodes removed, replacements added (with
    their DaemonSet pods), and the pods to move with their destinations. The third value
    says what is wrong when the round cannot be applied (a moved pod missing, a
    destination unknown)."""
    cluster = Cluster.from_objects(objects)
    moved: list[tuple[Obj, str]] = []
    gone = [n for c in disruption["commands"] for n in c["nodes"]]
    evicted = {}
    for n in gone:
        for p in cluster.remove_node(n):
            if not _is_daemon(p):
                evicted[key_of(p)] = p
    for k, c in enumerate(disruption["commands"]):
        names = {}
        for i, claim in enumerate(c["replacements"]):
            name = f"c{k}-replacement-{i}"
            body, why = claim_node(claim, name, objects, catalog)
            if body is None:
                return cluster, moved, why
            _add_node_with_daemons(cluster, body, objects)
            names[f"replacement-{i}"] = name
        for pod_key, dest in c["pods"].items():
            if pod_key not in evicted:
                return cluster, moved, f"command {k} moves {pod_key}, not a pod of its nodes"
            target = names.get(dest, dest)
            if target not in cluster.nodes:
                return cluster, moved, f"pod {pod_key} moves to {dest}: no such node"
            moved.append((evicted.pop(pod_key), target))
    if evicted:
        return cluster, moved, f"pods on removed nodes with no destination: {sorted(evicted)}"
    return cluster, moved, None


def _requirements_drifted(pool: Obj, labels: Mapping[str, str]) -> bool:
    """The pool no longer admits a node with ``labels``: a requirement or a template label
    it fails (Karpenter's RequirementsDrifted, judged here from the manifests alone)."""
    template = pool["spec"]["template"]
    reqs = template["spec"].get("requirements") or []
    tmpl_labels = (template.get("metadata") or {}).get("labels") or {}
    return not (
        all(requirement_matches(r, labels) for r in reqs)
        and all(labels.get(k) == v for k, v in tmpl_labels.items())
    )


def consolidate_after_failure(objects: Sequence[Obj], disruption: Mapping[str, Any]) -> str | None:
    """Karpenter's ``consolidateAfter`` gates its Empty and Underutilized methods only: no node
    of a pool with ``consolidateAfter: Never`` is in an Empty or Underutilized command, and a
    node of such a pool that has drifted is never held back by ``consolidateAfter``."""
    pools = {name_of(p): p for p in _kind(objects, "NodePool")}
    never = {
        n
        for n, p in pools.items()
        if (p["spec"].get("disruption") or {}).get("consolidateAfter") == "Never"
    }
    pool_of = {
        name_of(n): ((n.get("metadata") or {}).get("labels") or {}).get(NODEPOOL)
        for n in _kind(objects, "Node")
    }
    for c in disruption["commands"]:
        if c["reason"] == "Drifted":
            continue
        for name in c["nodes"]:
            if pool_of.get(name) in never:
                return f"{c['reason']} command takes {name}, of a consolidateAfter: Never pool"
    labels_of = {
        name_of(n): (n.get("metadata") or {}).get("labels") or {} for n in _kind(objects, "Node")
    }
    for b in disruption["blocked"]:
        pname = pool_of.get(b["node"])
        if (
            pname in never
            and "consolidateAfter" in b["reason"]
            and _requirements_drifted(pools[pname], labels_of[b["node"]])
        ):
            return f"drifted node {b['node']} held by consolidateAfter: {b['reason']}"
    return None


def judge_round(
    objects: Sequence[Obj],
    catalog: Mapping[str, Any],
    managed: Sequence[str],
    out: Mapping[str, Any],
    spot_to_spot: bool = False,
) -> str | None:
    """The partition rule, budgets, PDBs, Karpenter's spot-to-spot rule (``spot_to_spot``:
    its SpotToSpotConsolidation gate), and every moved pod admitted where it lands."""
    d = out["disruption"]
    why = partition_failure(managed, d)
    if why:
        return why
    why = spot_to_spot_failure(objects, d["commands"], spot_to_spot)
    if why:
        return why
    why = budget_failure(objects, d["commands"])
    if why:
        return why
    why = consolidate_after_failure(objects, d)
    if why:
        return why
    why = pdb_failure(objects, Cluster.from_objects(objects), d["commands"])
    if why:
        return why
    cluster, moved, why = apply_round(objects, catalog, d)
    if why:
        return why
    return first_failure(cluster, moved, final_state=True)


SPOT_TO_SPOT_MIN_TYPES = 15


def spot_to_spot_failure(
    objects: Sequence[Obj], commands: Sequence[Mapping[str, Any]], gate: bool
) -> str | None:
    """Karpenter's rule for nodes that are all spot: without the SpotToSpotConsolidation
    gate, no replacement that may launch spot; with it, a single node's spot replacement
    offers at least 15 (cheaper) types to launch from."""
    labels = {
        name_of(o): (o.get("metadata") or {}).get("labels") or {} for o in _kind(objects, "Node")
    }
    for cmd in commands:
        if cmd["reason"] != "Underutilized" or not cmd["replacements"]:
            continue
        if not all(labels.get(n, {}).get(CAPACITY_TYPE) == "spot" for n in cmd["nodes"]):
            continue
        for rep in cmd["replacements"]:
            if "spot" not in rep["capacityTypes"]:
                continue
            if not gate:
                return f"spot nodes {cmd['nodes']} replaced by spot without SpotToSpotConsolidation"
            if len(cmd["nodes"]) == 1 and len(rep["instanceTypes"]) < SPOT_TO_SPOT_MIN_TYPES:
                return (
                    f"spot node {cmd['nodes'][0]} replaced by spot from "
                    f"{len(rep['instanceTypes'])} types (Karpenter needs 15)"
                )
    return None
