"""Existing nodes on their own pool's catalog: a node is priced, and checked for drift,
against the catalog its own NodePool's EC2NodeClass sees, as Karpenter prices a candidate
from its NodeClaim's offering and compares a claim with its own NodePool and NodeClass.

The round's catalog (``run_round``'s ``instance_types``) is what a merged catalog gives
every pool: the first NodeClass to name a type gives it. Each test has two pools whose
NodeClasses see different catalogs and shows the decision a merged view would get wrong.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from models.catalog import load_catalog
from scheduling.disruption.claim_conditions import desired
from scheduling.disruption.prepare import prepare_round
from scheduling.inputs import Document
from tests.support.catalogs import ZA, ZC, catalog, od_price
from tests.support.disruption import (
    ALL,
    NOW,
    OD_AMD,
    bound,
    commands,
    disrupt,
    kept,
    node_and_claim,
    pool,
)
from tests.support.labels import NODEPOOL


def _priced(doc: Mapping[str, Any], factor: float) -> dict[str, Any]:
    """``doc`` with every price multiplied (a NodeClass whose AMI carries a licence, say)."""
    out = copy.deepcopy(dict(doc))
    for entry in out["instanceTypes"]:
        for o in entry["offerings"]:
            o["price"] = round(o["price"] * factor, 6)
    return out


def _without(doc: Mapping[str, Any], *, zone: str = "", name: str = "") -> dict[str, Any]:
    """``doc`` without the offerings in ``zone`` and without the type ``name``."""
    out = copy.deepcopy(dict(doc))
    out["instanceTypes"] = [
        {**e, "offerings": [o for o in e["offerings"] if o["zone"] != zone]}
        for e in out["instanceTypes"]
        if e["name"] != name
    ]
    return out


def _docs(docs: Sequence[Mapping[str, Any]]) -> list[Document]:
    return [Document(copy.deepcopy(dict(d)), f"doc {n}") for n, d in enumerate(docs)]


def _two_pools_one_node_each() -> list[Mapping[str, Any]]:
    """Pool ``linux`` has a full m5.large; pool ``win`` an m5.xlarge whose one pod needs an
    m5.large (5Gi: no c5.large holds it; amd64 on-demand only). Each pod selects its own
    pool, as pods select a Windows or Linux node by its OS."""
    return [
        pool("linux", requirements=OD_AMD, budgets=ALL),
        pool("win", requirements=OD_AMD, budgets=ALL),
        *node_and_claim("lx", "m5.large", nodepool_name="linux"),
        bound("lx0", "lx", "1800m", "7Gi", node_selector={NODEPOOL: "linux"}),
        *node_and_claim("w", "m5.xlarge", nodepool_name="win"),
        bound("w0", "w", "1", "5Gi", node_selector={NODEPOOL: "win"}),
    ]


def test_a_node_is_priced_from_its_own_pools_catalog_so_its_cheaper_replacement_is_found() -> None:
    """Pool ``win``'s NodeClass pays twice the price: its m5.xlarge costs 0.384/h, and an
    m5.large of its own (0.192/h) is strictly cheaper. Priced from the round's catalog, the
    node would cost 0.192/h and be kept for want of anything cheaper."""
    linux = catalog()
    out = disrupt(_two_pools_one_node_each(), linux, pool_catalogs={"win": _priced(linux, 2.0)})
    (cmd,) = commands(out)
    assert cmd["nodes"] == ["w"] and cmd["reason"] == "Underutilized"
    (rep,) = cmd["replacements"]
    assert rep["nodePool"] == "win" and rep["instanceTypes"][0] == "m5.large"
    assert rep["price"] == 2 * od_price("m5.large")
    assert cmd["savingsPerHour"] == round(2 * od_price("m5.xlarge") - 2 * od_price("m5.large"), 4)
    cost = out["disruption"]["costPerHour"]
    assert cost["before"] == round(od_price("m5.large") + 2 * od_price("m5.xlarge"), 4)
    assert "lx" in kept(out)


def test_one_catalog_for_every_pool_decides_as_before() -> None:
    """Both pools on one catalog: the m5.xlarge is replaced by an m5.large at that catalog's
    prices, and giving each pool that same list as its own changes nothing."""
    linux = catalog()
    alone = disrupt(_two_pools_one_node_each(), linux)
    same = disrupt(_two_pools_one_node_each(), linux, pool_catalogs={"win": linux, "linux": linux})
    assert alone == same
    (cmd,) = commands(alone)
    assert cmd["savingsPerHour"] == round(od_price("m5.xlarge") - od_price("m5.large"), 4)


def _drift(
    docs: Sequence[Mapping[str, Any]],
    round_catalog: Mapping[str, Any],
    own: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """Each candidate's drift reason, and each claim's Drifted condition reason."""
    i = prepare_round(
        _docs(docs),
        load_catalog(copy.deepcopy(dict(round_catalog))),
        NOW,
        {p: load_catalog(copy.deepcopy(dict(doc))) for p, doc in own.items()},
    )
    conditions = desired(i.cluster, NOW)
    return (
        {c.node.name: c.drifted for c in i.candidates},
        {
            claim: (w.reason if (w := wanted["Drifted"]) is not None else None)
            for claim, wanted in conditions.items()
        },
    )


def test_drift_compares_a_node_with_its_own_pools_catalog() -> None:
    """NodeClass ``a`` has no subnet in zone c (its catalog, the round's, lists nothing
    there); NodeClass ``b`` lists zone c but not r5.2xlarge. Pool ``b``'s m5.xlarge in zone c
    is offered to it (not drifted, though the round's catalog would say so); its r5.2xlarge
    is not (drifted, though the round's catalog offers it)."""
    full = catalog()
    a = _without(full, zone=ZC)
    b = _without(full, name="r5.2xlarge")
    docs = [
        pool("a", requirements=OD_AMD),
        pool("b", requirements=OD_AMD),
        *node_and_claim("a1", "m5.xlarge", nodepool_name="a", zone=ZA),
        *node_and_claim("b1", "m5.xlarge", nodepool_name="b", zone=ZC),
        *node_and_claim("b2", "r5.2xlarge", nodepool_name="b", zone=ZA),
    ]
    drifted, conditions = _drift(docs, a, {"a": a, "b": b})
    assert drifted["a1"] is None
    assert drifted["b1"] is None
    assert (drifted["b2"] or "").startswith("InstanceTypeNotFound: instance type 'r5.2xlarge'")
    assert conditions == {"a1-claim": None, "b1-claim": None, "b2-claim": "InstanceTypeNotFound"}
    # The drift method replaces b2 only.
    out = disrupt(
        [*docs[:2], *docs[2:], bound("b10", "b1", "3", "12Gi"), bound("b20", "b2", "6", "40Gi")],
        a,
        pool_catalogs={"a": a, "b": b},
    )
    assert [(c["reason"], c["nodes"]) for c in commands(out) if c["reason"] == "Drifted"] == [
        ("Drifted", ["b2"])
    ]


def test_drift_on_one_catalog_is_as_before() -> None:
    """Both pools on one catalog: the same verdicts as the round's catalog alone gives."""
    full = catalog()
    a = _without(full, zone=ZC)
    docs = [
        pool("a", requirements=OD_AMD),
        pool("b", requirements=OD_AMD),
        *node_and_claim("b1", "m5.xlarge", nodepool_name="b", zone=ZC),
    ]
    assert _drift(docs, a, {}) == _drift(docs, a, {"a": a, "b": a})
    assert (_drift(docs, a, {})[0]["b1"] or "").startswith("InstanceTypeNotFound")
