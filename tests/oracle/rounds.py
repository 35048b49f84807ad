"""A disruption round's answer applied to the manifests, so the next round can be asked on
the cluster it leaves: the command nodes and their pods go, replacements come up as
initialized managed Nodes (with their DaemonSet pods), and moved pods are bound where the
round said. Used to run rounds to a fixpoint (property tests, exactness)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from tests.oracle.checker import admits
from tests.oracle.cluster import Cluster, Obj, bound_to, key_of, name_of
from tests.oracle.generate import INITIALIZED, daemon_pod
from tests.oracle.judge import claim_node


def managed_nodes(objects: Sequence[Obj]) -> list[str]:
    """Nodes of a NodePool among the objects (DESIGN.md's *managed* nodes)."""
    pools = {name_of(o) for o in objects if o.get("kind") == "NodePool"}
    return [
        name_of(o)
        for o in objects
        if o.get("kind") == "Node"
        and ((o.get("metadata") or {}).get("labels") or {}).get("karpenter.sh/nodepool") in pools
    ]


def node_price(n: Obj, catalog: Mapping[str, Any]) -> float:
    """A managed node's price: its type's cheapest offering in its zone and capacity type."""
    labels = (n.get("metadata") or {}).get("labels") or {}
    entry = next(
        t
        for t in catalog["instanceTypes"]
        if t["name"] == labels["node.kubernetes.io/instance-type"]
    )
    return min(
        float(o["price"])
        for o in entry["offerings"]
        if o["zone"] == labels["topology.kubernetes.io/zone"]
        and o["capacityType"] == labels["karpenter.sh/capacity-type"]
    )


def cluster_cost(objects: Sequence[Obj], catalog: Mapping[str, Any]) -> float:
    names = set(managed_nodes(objects))
    return sum(
        node_price(o, catalog) for o in objects if o.get("kind") == "Node" and name_of(o) in names
    )


def _is_daemon(p: Obj) -> bool:
    refs = (p.get("metadata") or {}).get("ownerReferences") or []
    return any(r.get("kind") == "DaemonSet" for r in refs)


def apply(
    objects: Sequence[Obj], catalog: Mapping[str, Any], disruption: Mapping[str, Any], tag: str
) -> list[dict[str, Any]]:
    """The manifests after ``disruption``'s commands; replacements are named
    ``<tag>-<command>-<i>``. The round is assumed valid (``judge_round`` passed)."""
    gone = {n for c in disruption["commands"] for n in c["nodes"]}
    dest: dict[str, str] = {}
    new_nodes: list[dict[str, Any]] = []
    for k, c in enumerate(disruption["commands"]):
        names = {}
        for i, claim in enumerate(c["replacements"]):
            name = f"{tag}-{k}-{i}"
            body, why = claim_node(claim, name, objects, catalog)
            if body is None:
                raise ValueError(why)
            body["metadata"]["labels"][INITIALIZED] = "true"
            body["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
            body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
            new_nodes.append(body)
            names[f"replacement-{i}"] = name
        for pod_key, d in c["pods"].items():
            dest[pod_key] = names.get(d, d)
    out: list[dict[str, Any]] = []
    for o in objects:
        kind = o.get("kind")
        if kind in ("Node", "CSINode") and name_of(o) in gone:
            continue
        if kind == "Pod" and bound_to(o) in gone:
            if _is_daemon(o) or key_of(o) not in dest:
                continue
            moved = copy.deepcopy(dict(o))
            moved["spec"]["nodeName"] = dest[key_of(o)]
            out.append(moved)
            continue
        out.append(dict(o))
    out += new_nodes
    cluster = Cluster.from_objects(out)
    for ds in (o for o in objects if o.get("kind") == "DaemonSet"):
        for n in new_nodes:
            dp = daemon_pod(ds, name_of(n))
            if admits(dp, name_of(n), cluster) is None:
                cluster.pods.append(dp)
                out.append(dp)
    return out
