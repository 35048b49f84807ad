"""PodTopologySpread, hard constraints only (``whenUnsatisfiable: DoNotSchedule``).

Domains are counted as the kube-scheduler's PreFilter counts them: over the nodes that
carry every topology key of the pod's hard constraints and pass its policies
(``nodeAffinityPolicy``, default Honor: the pod's nodeSelector and required node affinity;
``nodeTaintsPolicy``, default Ignore: the node's NoSchedule/NoExecute taints tolerated).
Every value of the key on such a node is a domain, even one holding 0 matching pods. The
skew on a candidate is its domain's count, plus one when the pod matches its own selector,
minus the smallest count over domains (0 when fewer domains than ``minDomains``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.oracle.cluster import Cluster, Obj, namespace_of, pod_labels
from tests.oracle.selectors import (
    label_selector_matches,
    node_labels,
    pod_matches_node_selection,
    untolerated_taint,
)


def hard_constraints(pod: Obj) -> list[Mapping[str, Any]]:
    return [
        c
        for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or []
        if (c.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule"
    ]


def constraint_selector(pod: Obj, c: Mapping[str, Any]) -> dict[str, Any] | None:
    """The labelSelector with ``matchLabelKeys`` merged in (``key In [pod's value]``; keys
    the pod lacks are ignored)."""
    sel = c.get("labelSelector")
    if sel is None:
        return None
    labels = pod_labels(pod)
    extra = [
        {"key": k, "operator": "In", "values": [labels[k]]}
        for k in c.get("matchLabelKeys") or []
        if k in labels
    ]
    return {
        "matchLabels": sel.get("matchLabels") or {},
        "matchExpressions": [*(sel.get("matchExpressions") or []), *extra],
    }


def _counts_node(pod: Obj, c: Mapping[str, Any], node: Obj, keys: list[str]) -> bool:
    labels = node_labels(node)
    if any(k not in labels for k in keys):
        return False
    if (c.get("nodeAffinityPolicy") or "Honor") == "Honor" and not pod_matches_node_selection(
        pod, node
    ):
        return False
    honor_taints = (c.get("nodeTaintsPolicy") or "Ignore") == "Honor"
    return not (honor_taints and untolerated_taint(pod, node))


def spread_failure(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    constraints = hard_constraints(pod)
    if not constraints:
        return None
    keys = [c["topologyKey"] for c in constraints]
    labels = node_labels(node)
    missing = [k for k in keys if k not in labels]
    if missing:
        return f"topology spread: node lacks label {missing[0]}"
    ns = namespace_of(pod)
    for c in constraints:
        key = c["topologyKey"]
        selector = constraint_selector(pod, c)
        counts: dict[str, int] = {}
        for n in cluster.nodes.values():
            if _counts_node(pod, c, n, keys):
                counts.setdefault(node_labels(n)[key], 0)
        for p, n in cluster.placed():
            if not _counts_node(pod, c, n, keys):
                continue
            if namespace_of(p) != ns or (p.get("metadata") or {}).get("deletionTimestamp"):
                continue
            if label_selector_matches(selector, pod_labels(p)):
                domain = node_labels(n)[key]
                counts[domain] = counts.get(domain, 0) + 1
        min_domains = int(c.get("minDomains") or 1)
        floor = min(counts.values()) if counts else 0
        if len(counts) < min_domains:
            floor = 0
        self_match = 1 if label_selector_matches(selector, pod_labels(pod)) else 0
        here = counts.get(labels[key], 0)
        skew = here + self_match - floor
        if skew > int(c["maxSkew"]):
            return (
                f"topology spread on {key}: {key}={labels[key]} would hold {here + self_match}, "
                f"min {floor} over {len(counts)} domains, skew {skew} > maxSkew {c['maxSkew']}"
            )
    return None
