"""Property tests: a round's commands, applied to the cluster they were decided on, leave a
cluster where every pod has a node that holds it (cpu, memory, pod count), required
anti-affinity still holds, every Underutilized replacement type is strictly cheaper than the
nodes it replaces, and the cost the round predicted is what the next round measures."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.quantity import parse_quantity
from tests.support.catalogs import TYPES, ZONES, od_price, spot_price
from tests.support.disruption import bound, claim_for, disrupt, managed, pool
from tests.support.labels import HOSTNAME
from tests.support.manifests import pod_affinity

SMALL_TYPES = ["c5.large", "m5.large", "c6i.xlarge", "m5.xlarge", "m5.2xlarge", "r5.2xlarge"]
ANTI = {"podAntiAffinity": pod_affinity(HOSTNAME, {"app": "db"}, anti=True)["podAntiAffinity"]}
GIB = 2**30 * 1000  # memory in milli-bytes, as parse_quantity gives it


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    cts = draw(st.sampled_from([["on-demand"], ["on-demand", "spot"], ["spot"]]))
    policy = draw(st.sampled_from(["WhenEmptyOrUnderutilized", "Balanced"]))
    budgets = draw(st.sampled_from([[{"nodes": "100%"}], [{"nodes": "2"}], [{"nodes": "50%"}]]))
    docs: list[dict[str, Any]] = [
        pool(
            policy=policy,
            budgets=budgets,
            requirements=[
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": cts},
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
            ],
        )
    ]
    db_used = False
    for i in range(draw(st.integers(1, 6))):
        it = draw(st.sampled_from(SMALL_TYPES))
        node = managed(
            f"n{i}",
            it,
            zone=draw(st.sampled_from(ZONES)),
            capacity_type=draw(st.sampled_from(cts)),
        )
        docs += [node, claim_for(node)]
        cpu_left = parse_quantity(TYPES[it][0]) - 300
        mem_left = parse_quantity(TYPES[it][1]) - GIB // 2
        for j in range(draw(st.integers(0, 4))):
            cpu = draw(st.sampled_from([100, 250, 500, 1000, 1500]))
            mem = draw(st.sampled_from([256, 1024, 2048, 4096]))
            if cpu > cpu_left or mem * GIB // 1024 > mem_left:
                break
            cpu_left -= cpu
            mem_left -= mem * GIB // 1024
            db = not db_used and draw(st.integers(0, 3)) == 0
            db_used = db_used or db
            kw: dict[str, Any] = {"labels": {"app": "db"}, "affinity": ANTI} if db else {}
            docs.append(bound(f"p{i}-{j}", f"n{i}", f"{cpu}m", f"{mem}Mi", **kw))
        db_used = False  # at most one db pod per node, as anti-affinity requires
    return docs


def _price(instance_type: str, zone: str, capacity_type: str) -> float:
    return (spot_price if capacity_type == "spot" else od_price)(instance_type, zone)


def _node_price(node: Mapping[str, Any]) -> float:
    labels = node["metadata"]["labels"]
    return _price(
        labels["node.kubernetes.io/instance-type"],
        labels["topology.kubernetes.io/zone"],
        labels["karpenter.sh/capacity-type"],
    )


def _apply(docs: Sequence[Mapping[str, Any]], out: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The cluster after the round: commanded nodes gone, replacements running (the
    cheapest offering they allow), moved pods bound to their destinations."""
    removed = {n for c in out["disruption"]["commands"] for n in c["nodes"]}
    dest: dict[str, str] = {}
    new: list[dict[str, Any]] = []
    for ci, c in enumerate(out["disruption"]["commands"]):
        names = []
        for ri, rep in enumerate(c["replacements"]):
            price, it, zone, ct = min(
                (_price(t, z, ct), t, z, ct)
                for t in rep["instanceTypes"]
                for z in rep["zones"]
                for ct in rep["capacityTypes"]
            )
            assert abs(price - rep["price"]) < 1e-6, "a replacement is priced at its cheapest"
            name = f"c{ci}-r{ri}"
            while any(d.get("kind") == "Node" and d["metadata"]["name"] == name for d in docs):
                name += "x"  # a replacement of an earlier round has the name
            node = managed(name, it, zone=zone, capacity_type=ct)
            new += [node, claim_for(node)]
            names.append(node["metadata"]["name"])
        for key, where in c["pods"].items():
            if where.startswith("replacement-"):
                where = names[int(where.split("-", 1)[1])]
            dest[key] = where
    after: list[Mapping[str, Any]] = []
    for d in docs:
        d = copy.deepcopy(dict(d))
        if d.get("kind") == "Node" and d["metadata"]["name"] in removed:
            continue
        if d.get("kind") == "NodeClaim" and d["status"]["nodeName"] in removed:
            continue
        if d.get("kind") == "Pod":
            key = f"default/{d['metadata']['name']}"
            if d["spec"]["nodeName"] in removed:
                assert key in dest, f"{key} was left without a node"
                d["spec"]["nodeName"] = dest[key]
        after.append(d)
    return after + new


def _check_fits(cluster: Sequence[Mapping[str, Any]]) -> None:
    nodes = {d["metadata"]["name"]: d for d in cluster if d.get("kind") == "Node"}
    used: dict[str, list[int]] = {n: [0, 0, 0] for n in nodes}
    db: dict[str, int] = {}
    for d in cluster:
        if d.get("kind") != "Pod":
            continue
        node = d["spec"]["nodeName"]
        assert node in nodes, f"pod {d['metadata']['name']} is bound to a node that is gone"
        req = d["spec"]["containers"][0]["resources"]["requests"]
        used[node][0] += parse_quantity(req["cpu"])
        used[node][1] += parse_quantity(req["memory"])
        used[node][2] += 1000
        if d["metadata"].get("labels", {}).get("app") == "db":
            db[node] = db.get(node, 0) + 1
    for name, (cpu, mem, count) in used.items():
        alloc = nodes[name]["status"]["allocatable"]
        assert cpu <= parse_quantity(alloc["cpu"]), f"{name}: cpu over allocatable"
        assert mem <= parse_quantity(alloc["memory"]), f"{name}: memory over allocatable"
        assert count <= parse_quantity(alloc["pods"]), f"{name}: too many pods"
    assert all(n <= 1 for n in db.values()), "two db pods share a node"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_applied_commands_leave_every_pod_on_a_node_that_holds_it(docs: list[Any]) -> None:
    out = disrupt(docs)
    after = _apply(docs, out)
    _check_fits(after)
    nodes = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Node"}
    for c in out["disruption"]["commands"]:
        if c["reason"] != "Underutilized" or not c["replacements"]:
            continue
        total = sum(_node_price(nodes[n]) for n in c["nodes"])
        (rep,) = c["replacements"]
        for t in rep["instanceTypes"]:
            cheapest = min(_price(t, z, ct) for z in rep["zones"] for ct in rep["capacityTypes"])
            assert cheapest < total, f"{t} is not cheaper than {c['nodes']}"
    # The next round sees the cost this round predicted.
    again = disrupt(after)
    predicted = out["disruption"]["costPerHour"]["after"]
    assert abs(again["disruption"]["costPerHour"]["before"] - predicted) < 1e-4


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_rounds_to_a_fixpoint_never_raise_the_cost(docs: list[Any]) -> None:
    cluster = list(docs)
    cost = None
    for _ in range(6):
        out = disrupt(cluster)
        d = out["disruption"]
        if cost is not None:
            assert d["costPerHour"]["before"] <= cost + 1e-4
        assert d["costPerHour"]["after"] <= d["costPerHour"]["before"] + 1e-9
        if not d["commands"]:
            break
        cost = d["costPerHour"]["after"]
        cluster = _apply(cluster, out)
        _check_fits(cluster)
