"""Property tests over generated clusters: the ``--disruption`` contract holds for any input
(every managed node named once, costs add up, Empty commands move nothing, Underutilized
replacements save), budgets are never exceeded across a round, PDB evictions of a round stay
within what each PDB allows, moved pods fit where they go, and the same input gives the same
output."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.quantity import parse_quantity
from tests.support.catalogs import TYPES
from tests.support.disruption import DO_NOT_DISRUPT, bound, claim_for, disrupt, managed, pdb, pool
from tests.support.manifests import daemonset

SMALL_TYPES = ["c5.large", "m5.large", "c6i.xlarge", "m5.xlarge", "m5.2xlarge", "r5.2xlarge"]
REASONS = ("Empty", "Drifted", "Underutilized")


@st.composite
def clusters(draw: st.DrawFn) -> list[Mapping[str, Any]]:
    docs: list[Mapping[str, Any]] = []
    pools = ["p0", "p1"][: draw(st.integers(1, 2))]
    for name in pools:
        budget_choices: list[list[dict[str, Any]] | None] = [
            None,
            [{"nodes": "1"}],
            [{"nodes": "50%"}],
            [{"nodes": "2"}, {"nodes": "0", "reasons": ["Drifted"]}],
            [{"nodes": "100%"}],
        ]
        budgets = draw(st.sampled_from(budget_choices))
        policy = draw(st.sampled_from(["WhenEmptyOrUnderutilized", "WhenEmpty"]))
        ct = draw(st.sampled_from([["on-demand"], ["on-demand", "spot"]]))
        docs.append(
            pool(
                name,
                policy=policy,
                budgets=budgets,
                requirements=[
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ct}
                ],
            )
        )
    if draw(st.booleans()):
        docs.append(daemonset("logs", "100m", "128Mi"))
    n_nodes = draw(st.integers(1, 7))
    app_pods: dict[str, int] = {}
    for i in range(n_nodes):
        it = draw(st.sampled_from(SMALL_TYPES))
        p = draw(st.sampled_from(pools))
        node_body = managed(
            f"n{i}",
            it,
            nodepool_name=p,
            capacity_type=draw(st.sampled_from(["on-demand", "on-demand", "spot"])),
            initialized=draw(st.integers(0, 9)) > 0,
            ready=draw(st.integers(0, 9)) > 0,
            annotations={DO_NOT_DISRUPT: "true"} if draw(st.integers(0, 14)) == 0 else None,
        )
        docs += [node_body, claim_for(node_body)]
        cpu_left = parse_quantity(TYPES[it][0]) - 200
        mem_left = parse_quantity(TYPES[it][1]) - 300 * 2**20 * 1000
        for j in range(draw(st.integers(0, 4))):
            cpu = draw(st.sampled_from([100, 250, 500, 1000]))
            mem = draw(st.sampled_from([128, 512, 1024, 2048]))
            if cpu > cpu_left or mem * 2**20 * 1000 > mem_left:
                break
            cpu_left -= cpu
            mem_left -= mem * 2**20 * 1000
            app = draw(st.sampled_from(["web", "api", "batch"]))
            app_pods[app] = app_pods.get(app, 0) + 1
            docs.append(
                bound(f"{app}-{i}-{j}", f"n{i}", f"{cpu}m", f"{mem}Mi", labels={"app": app})
            )
    if draw(st.booleans()) and app_pods.get("web"):
        docs.append(pdb("web", {"app": "web"}, max_unavailable=draw(st.integers(0, 2))))
    return docs


def _allowed(docs: Sequence[Mapping[str, Any]], pool_name: str, reason: str) -> int:
    """The budget formula, written out independently of the engine's ledger."""
    body = next(
        d for d in docs if d.get("kind") == "NodePool" and d["metadata"]["name"] == pool_name
    )
    nodes = [
        d
        for d in docs
        if d.get("kind") == "Node"
        and d["metadata"]["labels"].get("karpenter.sh/nodepool") == pool_name
        and d["metadata"]["labels"].get("karpenter.sh/initialized") == "true"
    ]
    disrupting = sum(1 for n in nodes if n["status"]["conditions"][0]["status"] != "True")
    budgets = body["spec"]["disruption"].get("budgets") or [{"nodes": "10%"}]
    limits = []
    for b in budgets:
        if b.get("reasons") and reason not in b["reasons"]:
            continue
        v = b["nodes"]
        limits.append(math.ceil(len(nodes) * int(v[:-1]) / 100) if v.endswith("%") else int(v))
    return max(0, (min(limits) if limits else len(nodes)) - disrupting)


def _pool_of(docs: Sequence[Mapping[str, Any]], node: str) -> str:
    return next(
        d["metadata"]["labels"]["karpenter.sh/nodepool"]
        for d in docs
        if d.get("kind") == "Node" and d["metadata"]["name"] == node
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_the_contract_holds_for_any_cluster(docs: list[Mapping[str, Any]]) -> None:
    out = disrupt(docs)  # checks partition, costs, Empty/Underutilized rules
    assert disrupt(docs) == out, "same input, same output"
    d = out["disruption"]

    taken: dict[str, int] = {}
    for c in d["commands"]:
        pools = {_pool_of(docs, n) for n in c["nodes"]}
        for p in pools:
            taken[p] = taken.get(p, 0) + sum(1 for n in c["nodes"] if _pool_of(docs, n) == p)
            assert taken[p] <= _allowed(docs, p, c["reason"]), f"budget of {p} exceeded"

    # Every evicted pod has a destination, and no PDB loses more than it allows.
    bound_to: dict[str, list[str]] = {}
    for doc in docs:
        if doc.get("kind") == "Pod":
            bound_to.setdefault(doc["spec"]["nodeName"], []).append(
                f"default/{doc['metadata']['name']}"
            )
    moved: list[str] = []
    for c in d["commands"]:
        for n in c["nodes"]:
            for key in bound_to.get(n, []):
                assert key in c["pods"], f"{key} on {n} has no destination"
                moved.append(key)
    for doc in docs:
        if doc.get("kind") == "PodDisruptionBudget":
            # Every generated pod is healthy, so the PDB allows exactly maxUnavailable.
            web = [k for k in moved if k.startswith("default/web-")]
            assert len(web) <= doc["spec"]["maxUnavailable"], "a PDB lost more than it allows"

    # Pods moved to existing nodes fit there, with what already runs on them.
    capacity = {
        doc["metadata"]["name"]: doc["status"]["allocatable"]
        for doc in docs
        if doc.get("kind") == "Node"
    }
    load: dict[str, int] = {}
    requests = {
        f"default/{doc['metadata']['name']}": parse_quantity(
            doc["spec"]["containers"][0]["resources"]["requests"]["cpu"]
        )
        for doc in docs
        if doc.get("kind") == "Pod"
    }
    removed = {n for c in d["commands"] for n in c["nodes"]}
    for node, keys in bound_to.items():
        if node not in removed:
            load[node] = sum(requests[k] for k in keys)
    for c in d["commands"]:
        for key, dest in c["pods"].items():
            if dest in capacity:
                load[dest] = load.get(dest, 0) + requests[key]
                assert load[dest] <= parse_quantity(capacity[dest]["cpu"]), f"{dest} overfull"
