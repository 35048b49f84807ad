"""A round's later commands count the pods its earlier commands put on replacements.

Found by the real kube-scheduler judging a disruption round (tests/component/kubernetes/
test_scheduler_oracle.py, seed 20123, shrunk to two nodes): two pods with zonal
anti-affinity, each on a node being replaced; the first replacement went to the cheapest
zone, and the second command, which no longer saw the first pod anywhere (its node removed,
its replacement not a node of the round's state), put its replacement in the same zone. The
scheduler refused the second pod there ("didn't match pod anti-affinity rules")."""

from __future__ import annotations

from tests.support.catalogs import ZA, ZB
from tests.support.disruption import bound, commands, disrupt, managed, pool
from tests.support.labels import INSTANCE_TYPE, ZONE
from tests.support.manifests import req

APART = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": ZONE}
        ]
    }
}


def test_two_replacements_of_one_round_keep_zonal_anti_affinity() -> None:
    docs = [
        # Both nodes are drifted (the pool now allows only m5.large): each gets a replacement.
        pool(requirements=[req(INSTANCE_TYPE, "In", "m5.large")], budgets=[{"nodes": "100%"}]),
        managed("n-a", "m5.xlarge", zone=ZA),
        managed("n-b", "m5.xlarge", zone=ZB),
        bound("x-0", "n-a", labels={"app": "x"}, affinity=APART),
        bound("x-1", "n-b", labels={"app": "x"}, affinity=APART),
    ]
    out = disrupt(docs)
    zones = [r["zones"] for c in commands(out) for r in c["replacements"]]
    assert len(zones) == 2 and all(len(z) == 1 for z in zones), commands(out)
    assert zones[0] != zones[1], commands(out)
