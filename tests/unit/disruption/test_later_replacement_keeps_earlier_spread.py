"""A later command of a round may not open a topology domain that breaks an earlier move.

Found by the round oracle (tests/oracle/test_round_oracle.py, shard 0): one command moved a
zone-spread pod within its zone while only two zones had nodes; a later command replaced a
node by one in a third zone holding one of the app's pods. Each move passed alone, but the
round's commands run at once, and once the third zone has a node the kube-scheduler counts
it, so the first pod's zone is two over the least. The later command waits a round."""

from __future__ import annotations

from typing import Any

from tests.support.catalogs import ZA, ZB, ZC, catalog
from tests.support.disruption import bound, commands, disrupt, node_and_claim, pool
from tests.support.labels import ARCH, CAPACITY_TYPE, HOSTNAME, ZONE
from tests.support.manifests import node, pod_affinity, req

SPREAD = {
    "maxSkew": 1,
    "topologyKey": ZONE,
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "web"}},
}


def _web(name: str, node_name: str, cpu: str = "1") -> dict[str, Any]:
    return bound(
        name,
        node_name,
        cpu,
        "1Gi",
        labels={"app": "web"},
        spread=[SPREAD],
        affinity=pod_affinity(HOSTNAME, {"app": "web"}, anti=True),
    )


def _skew_after(docs: list[dict[str, Any]], out: dict[str, Any]) -> int:
    """Web pods per zone once every command of the round has run (plain counting)."""
    zone_of = {
        d["metadata"]["name"]: d["metadata"]["labels"][ZONE] for d in docs if d["kind"] == "Node"
    }
    where = {
        f"default/{d['metadata']['name']}": zone_of[d["spec"]["nodeName"]]
        for d in docs
        if d["kind"] == "Pod" and (d["metadata"].get("labels") or {}).get("app") == "web"
    }
    for c in commands(out):
        zones = {f"replacement-{i}": r["zones"][0] for i, r in enumerate(c["replacements"])}
        for pod, dest in c["pods"].items():
            if pod in where:
                where[pod] = zones.get(dest) or zone_of[dest]
    counts = {z: 0 for z in set(zone_of.values()) | set(where.values())}
    for z in where.values():
        counts[z] += 1
    return max(counts.values()) - min(counts.values())


def test_a_replacement_in_a_new_zone_waits_for_the_pods_moved_this_round() -> None:
    docs: list[dict[str, Any]] = [
        pool(
            requirements=[req(CAPACITY_TYPE, "In", "spot", "on-demand"), req(ARCH, "In", "amd64")],
            budgets=[{"nodes": "100%"}],
        ),
        # zone b: two web pods on full unmanaged nodes, a large one on a managed node no new
        # node undercuts (zone a has no m5.2xlarge now), and an unmanaged node it fits on
        node("full-b0", "1", "4Gi", zone=ZB),
        node("full-b1", "1", "4Gi", zone=ZB),
        *node_and_claim("big-b", "m5.2xlarge", zone=ZB, capacity_type="spot"),
        node("room-b", "6", "8Gi", zone=ZB),
        # zone c: one web pod on a managed node a zone-a node would undercut, one on a full
        # unmanaged node; no node at all in zone a
        *node_and_claim("small-c", "c5.large", zone=ZC),
        node("full-c", "1", "4Gi", zone=ZC),
        _web("web-0", "full-b0"),
        _web("web-1", "full-b1"),
        _web("web-2", "big-b", cpu="6"),
        _web("web-3", "small-c"),
        _web("web-4", "full-c"),
    ]
    out = disrupt(docs, catalog(unavailable=[("m5.2xlarge", ZA, "spot")]))
    assert any(c["nodes"] == ["big-b"] for c in commands(out)), commands(out)
    assert _skew_after(docs, out) <= 1, commands(out)
