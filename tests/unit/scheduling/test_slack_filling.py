"""Slack filling never leaves a claim holding more than its instance types can.

Found by the disruption benchmark: a claim that gave pods to an earlier claim, received pods
from a later one into the room it had freed, and then had its own pods put back (it was no
cheaper) ended over-full — no instance type listed, price 0, pods planned onto a node that
cannot exist. Reproduced by the benchmark's own Deployments generator on the EC2-shaped
catalog (5 Deployments, seed 3: 709 pods).
"""

from __future__ import annotations

from benchmarks.catalogs import ec2_like_catalog
from benchmarks.workloads import deployments
from scheduling.inputs import Document, build_problem
from scheduling.solver import Solver
from tests.support.manifests import nodepool_body

POOL = nodepool_body("general", node_class="x", requirements=[])


def test_every_claim_holds_its_pods_on_its_cheapest_listed_type() -> None:
    pods = deployments(seed=3, count=5)
    parsed = build_problem(
        [Document(p, f"pod {i}") for i, p in enumerate(pods)] + [Document(POOL, "pool")],
        ec2_like_catalog(),
    )
    plan = Solver(parsed.problem).solve()
    assert not plan.unschedulable
    assert sum(len(c.pods) for c in plan.claims) == len(pods)
    for claim in plan.claims:
        assert claim.instance_types, f"a claim of {len(claim.pods)} pods lists no type"
        assert claim.price > 0
        cheapest = claim.instance_types[0]
        for resource, need in claim.requests.items():
            have = cheapest.allocatable.get(resource, 0)
            assert need <= have, f"{resource}: {need} > {have} on {cheapest.name}"
