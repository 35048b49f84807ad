"""The oracle's verdict: does the kube-scheduler's filter admit each pod where it is placed?

``first_failure`` judges pods one by one in the given order, each against the pods already
there (as the scheduler admits them); ``final_state=True`` instead judges every placed pod
against all the others once all are placed. Either returns None, or one line naming the pod,
the node and the rule that refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tests.oracle.cluster import Cluster, Obj, key_of, with_node
from tests.oracle.interpod import interpod_failure
from tests.oracle.ports import port_failure
from tests.oracle.resources import fit_failure
from tests.oracle.selectors import node_labels, pod_matches_node_selection, untolerated_taint
from tests.oracle.spread import spread_failure
from tests.oracle.volumes import attach_failure, volume_failure

Rule = Callable[[Obj, Obj, Cluster], "str | None"]


def _unschedulable(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    if not (node.get("spec") or {}).get("unschedulable"):
        return None
    taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    if untolerated_taint(pod, {"spec": {"taints": [taint]}}):
        return "node is unschedulable (cordoned)"
    return None


def _node_affinity(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    if pod_matches_node_selection(pod, node):
        return None
    return (
        f"nodeSelector / required node affinity do not match the node's labels {node_labels(node)}"
    )


def _taints(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    taint = untolerated_taint(pod, node)
    if taint is None:
        return None
    return f"untolerated taint {taint.get('key')}={taint.get('value', '')}:{taint.get('effect')}"


# The kube-scheduler's filter plugins, in its order.
RULES: tuple[tuple[str, Rule], ...] = (
    ("NodeUnschedulable", _unschedulable),
    ("NodeAffinity", _node_affinity),
    ("TaintToleration", _taints),
    ("NodePorts", port_failure),
    ("NodeResourcesFit", fit_failure),
    ("VolumeBinding", volume_failure),
    ("NodeVolumeLimits", attach_failure),
    ("PodTopologySpread", spread_failure),
    ("InterPodAffinity", interpod_failure),
)


def admits(pod: Obj, node_name: str, cluster: Cluster) -> str | None:
    """Why ``pod`` may not join ``node_name`` in ``cluster`` (pod not yet in it), or None."""
    node = cluster.nodes.get(node_name)
    if node is None:
        return f"pod {key_of(pod)} → {node_name}: no such node"
    for rule, check in RULES:
        why = check(pod, node, cluster)
        if why:
            return f"pod {key_of(pod)} → {node_name}: {rule}: {why}"
    return None


def first_failure(
    cluster: Cluster, placements: Sequence[tuple[Obj, str]], final_state: bool = False
) -> str | None:
    """Place ``placements`` (pod, node name) on a copy of ``cluster``; the first refusal."""
    c = cluster.copy()
    if final_state:
        c.pods.extend(with_node(p, n) for p, n in placements)
        for p, n in placements:
            me = key_of(p)
            rest = c.copy()
            rest.pods = [q for q in c.pods if key_of(q) != me]
            why = admits(p, n, rest)
            if why:
                return why
        return None
    for p, n in placements:
        why = admits(p, n, c)
        if why:
            return why
        c.pods.append(with_node(p, n))
    return None


def existing_failure(cluster: Cluster) -> str | None:
    """Judge the pods already bound in ``cluster`` against each other (final state)."""
    placed = [(p, str((p.get("spec") or {}).get("nodeName"))) for p, _ in cluster.placed()]
    base = cluster.copy()
    base.pods = []
    return first_failure(base, placed, final_state=True)
