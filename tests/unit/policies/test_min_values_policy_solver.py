"""MIN_VALUES_POLICY in the solver: Strict refuses a claim whose types no longer give a
requirement's minValues; BestEffort keeps the claim with the minValues its types do give,
marked as Karpenter marks it (``karpenter.sh/nodeclaim-min-values-relaxed``)."""

from __future__ import annotations

from models.catalog import load_catalog
from models.policies import BEST_EFFORT, Policies
from scheduling.inputs import Document, build_problem
from scheduling.solver import Solver
from tests.support.catalogs import catalog
from tests.support.labels import ARCH, CAPACITY_TYPE, FAMILY, INSTANCE_TYPE
from tests.support.manifests import nodepool, pod, req
from tests.support.plans import claim_of, plan, reason, requirement

AMD_OD = [req(CAPACITY_TYPE, "In", "on-demand"), req(ARCH, "In", "amd64")]
BEST = Policies(min_values=BEST_EFFORT)


def _docs() -> list[dict[str, object]]:
    return [
        nodepool(requirements=[*AMD_OD, req(FAMILY, "Exists", min_values=3)]),
        pod("a", "6", "1Gi"),  # m5, r5 and m7i families fit
        pod("b", "10", "1Gi"),  # only m7i fits
    ]


def test_strict_refuses_the_pod_that_would_narrow_below_min_values() -> None:
    out = plan(_docs())
    assert "minValues" in reason(out, "default/b")
    assert "minValuesRelaxed" not in claim_of(out, "default/a")


def test_best_effort_plans_it_with_the_min_values_its_types_give() -> None:
    out = plan(_docs(), policies=BEST)
    assert out["unschedulable"] == []
    b = claim_of(out, "default/b")
    assert b["instanceTypes"] == ["m7i.4xlarge"]
    fam = requirement(b, FAMILY)
    assert fam is not None and fam["minValues"] == 1  # one family left: m7i
    assert b["minValuesRelaxed"] is True


def test_best_effort_leaves_a_claim_that_meets_min_values_alone() -> None:
    out = plan(_docs()[:2], policies=BEST)
    a = claim_of(out, "default/a")
    assert "minValuesRelaxed" not in a
    fam = requirement(a, FAMILY)
    assert fam is not None and fam["minValues"] == 3


def test_best_effort_still_needs_a_type_that_fits() -> None:
    out = plan(
        [
            nodepool(requirements=[*AMD_OD, req(INSTANCE_TYPE, "Exists", min_values=3)]),
            pod("giant", "500", "1Gi"),
        ],
        policies=BEST,
    )
    assert "default/giant" in [u["pod"] for u in out["unschedulable"]]


def test_best_effort_relaxes_a_claim_as_pods_join_it() -> None:
    """Karpenter lowers the claim's minValues as each pod narrows it, never below what is
    left: a second small pod joins the relaxed claim rather than opening a new one."""
    out = plan(
        [
            nodepool(requirements=[*AMD_OD, req(FAMILY, "Exists", min_values=3)]),
            pod("b", "10", "1Gi"),
            pod("c", "1", "1Gi"),
        ],
        policies=BEST,
    )
    assert len(out["nodeClaims"]) == 1
    claim = out["nodeClaims"][0]
    assert sorted(claim["pods"]) == ["default/b", "default/c"]
    assert claim["minValuesRelaxed"] is True


def test_planned_nodeclaim_carries_the_relaxed_annotation() -> None:
    from activities.planning.plan import planned_nodeclaim
    from models.nodepool import NodePool
    from models.policies import MIN_VALUES_RELAXED_ANNOTATION

    docs = _docs()
    for policies, want in ((Policies(), "false"), (BEST, "true")):
        parsed = build_problem(
            [Document(d, f"doc {i}") for i, d in enumerate(docs)],
            load_catalog(catalog()),
            policies=policies,
        )
        result = Solver(parsed.problem).solve()
        pool = NodePool.model_validate(docs[0])
        marks = {
            planned_nodeclaim(c, pool, f"c{i}").body["metadata"]["annotations"][
                MIN_VALUES_RELAXED_ANNOTATION
            ]
            for i, c in enumerate(result.claims)
            if any(p.name == "b" for p in c.pods) or policies is not BEST
        }
        assert marks == {want}
