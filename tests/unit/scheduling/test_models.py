"""Pydantic validation of NodePool (as Karpenter's CRD validates it) and defaults."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from models.nodepool import NodePool
from tests.support.manifests import nodepool, req


def build(**changes: Any) -> dict[str, Any]:
    body = nodepool(requirements=changes.pop("requirements", []))
    spec = body["spec"]
    for key, value in changes.items():
        if key in ("expireAfter", "taints", "startupTaints"):
            spec["template"]["spec"][key] = value
        elif key == "labels":
            spec["template"]["metadata"]["labels"] = value
        else:
            spec[key] = value
    return body


def valid(**changes: Any) -> NodePool:
    return NodePool.model_validate(build(**changes))


def invalid(**changes: Any) -> str:
    with pytest.raises(ValidationError) as exc:
        NodePool.model_validate(build(**changes))
    return str(exc.value)


def test_defaults() -> None:
    np = valid()
    assert np.spec.template.spec.expire_after == "720h"
    assert np.spec.weight is None
    assert np.spec.disruption.consolidation_policy == "WhenEmptyOrUnderutilized"
    assert np.spec.disruption.consolidate_after == "0s"
    assert [b.nodes for b in np.spec.disruption.budgets] == ["10%"]
    assert np.spec.limits == {}


@pytest.mark.parametrize("value", ["Never", "24h", "1h30m", "720h"])
def test_expire_after_accepts_durations_and_never(value: str) -> None:
    assert valid(expireAfter=value).spec.template.spec.expire_after == value


@pytest.mark.parametrize("value", ["forever", "10", "1d", ""])
def test_expire_after_rejects_others(value: str) -> None:
    invalid(expireAfter=value)


@pytest.mark.parametrize("mv", [1, 25, 50])
def test_min_values_in_range(mv: int) -> None:
    np = valid(requirements=[req("node.kubernetes.io/instance-type", "Exists", min_values=mv)])
    assert np.spec.template.spec.requirements[0].min_values == mv


@pytest.mark.parametrize("mv", [0, 51, -1])
def test_min_values_out_of_range(mv: int) -> None:
    invalid(requirements=[req("node.kubernetes.io/instance-type", "Exists", min_values=mv)])


def test_min_values_cannot_exceed_in_values() -> None:
    assert "minValues" in invalid(
        requirements=[req("node.kubernetes.io/instance-type", "In", "a", "b", min_values=3)]
    )


def test_in_needs_values() -> None:
    assert "In" in invalid(requirements=[{"key": "kubernetes.io/arch", "operator": "In"}])


def test_not_in_may_have_values() -> None:
    valid(requirements=[req("kubernetes.io/arch", "NotIn", "arm64")])


@pytest.mark.parametrize("values", [["1", "2"], ["x"], [], ["-1"]])
def test_gt_takes_one_non_negative_integer(values: list[str]) -> None:
    invalid(requirements=[{"key": "example.com/gen", "operator": "Gt", "values": values}])


def test_gt_and_lt_valid() -> None:
    np = valid(requirements=[req("example.com/gen", "Gt", "3"), req("example.com/gen", "Lt", "9")])
    r = np.requirements()["example.com/gen"]
    assert r.gt == 3 and r.lt == 9


def test_exists_takes_no_values() -> None:
    invalid(requirements=[{"key": "kubernetes.io/arch", "operator": "Exists", "values": ["x"]}])


def test_unknown_operator_rejected() -> None:
    invalid(requirements=[{"key": "kubernetes.io/arch", "operator": "Near", "values": ["x"]}])


@pytest.mark.parametrize("weight", [1, 50, 100])
def test_weight_in_range(weight: int) -> None:
    assert valid(weight=weight).spec.weight == weight


@pytest.mark.parametrize("weight", [0, 101, -5])
def test_weight_out_of_range(weight: int) -> None:
    invalid(weight=weight)


@pytest.mark.parametrize("nodes", ["0", "5", "10%", "100%", "0%"])
def test_budget_nodes_valid(nodes: str) -> None:
    np = valid(disruption={"budgets": [{"nodes": nodes}]})
    assert np.spec.disruption.budgets[0].nodes == nodes


@pytest.mark.parametrize("nodes", ["101%", "abc", "-1", "5 %", "1.5"])
def test_budget_nodes_invalid(nodes: str) -> None:
    invalid(disruption={"budgets": [{"nodes": nodes}]})


def test_budget_schedule_and_duration_together() -> None:
    valid(disruption={"budgets": [{"nodes": "0", "schedule": "0 9 * * 1-5", "duration": "8h"}]})
    valid(disruption={"budgets": [{"nodes": "0", "schedule": "@daily", "duration": "1h"}]})
    assert "together" in invalid(disruption={"budgets": [{"nodes": "0", "schedule": "0 9 * * *"}]})
    assert "together" in invalid(disruption={"budgets": [{"nodes": "0", "duration": "8h"}]})


def test_budget_bad_schedule_or_duration() -> None:
    invalid(disruption={"budgets": [{"nodes": "0", "schedule": "0 9 * *", "duration": "8h"}]})
    invalid(disruption={"budgets": [{"nodes": "0", "schedule": "0 9 * * *", "duration": "soon"}]})


def test_budget_reasons() -> None:
    valid(disruption={"budgets": [{"nodes": "1", "reasons": ["Drifted", "Empty"]}]})
    invalid(disruption={"budgets": [{"nodes": "1", "reasons": ["Bored"]}]})


def test_consolidation_policy_values() -> None:
    valid(disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"})
    invalid(disruption={"consolidationPolicy": "WhenUnderutilized"})
    invalid(disruption={"consolidateAfter": "later"})


def test_limits_quantities() -> None:
    np = valid(limits={"cpu": "100", "memory": "400Gi", "nodes": 10})
    assert np.limits_milli() == {"cpu": 100_000, "memory": 400 * 2**30 * 1000, "nodes": 10_000}
    assert "cpu" in invalid(limits={"cpu": "lots"})


def test_restricted_requirement_keys() -> None:
    invalid(requirements=[req("karpenter.sh/nodepool", "In", "x")])
    invalid(requirements=[req("kubernetes.io/hostname", "In", "x")])
    valid(requirements=[req("karpenter.k8s.aws/instance-family", "In", "m5")])
    valid(requirements=[req("node.kubernetes.io/instance-type", "In", "m5.large")])
    valid(requirements=[req("team", "In", "x")])


def test_restricted_template_labels() -> None:
    invalid(labels={"karpenter.sh/nodepool": "x"})
    invalid(labels={"kubernetes.io/hostname": "x"})
    valid(labels={"team": "x", "node.kubernetes.io/role": "web"})


def test_taint_effect_validated() -> None:
    valid(taints=[{"key": "a", "effect": "NoSchedule"}])
    invalid(taints=[{"key": "a", "effect": "Sometimes"}])


def test_requirements_include_labels_and_nodepool_name() -> None:
    np = valid(labels={"team": "x"}, requirements=[req("beta.kubernetes.io/arch", "In", "arm64")])
    reqs = np.requirements()
    assert reqs["karpenter.sh/nodepool"].values == frozenset({"default"})
    assert reqs["team"].values == frozenset({"x"})
    assert reqs["kubernetes.io/arch"].values == frozenset({"arm64"})


def test_wrong_api_version_or_kind_rejected() -> None:
    body = build()
    body["apiVersion"] = "karpenter.sh/v1beta1"
    with pytest.raises(ValidationError):
        NodePool.model_validate(body)


def test_node_class_ref_required() -> None:
    body = build()
    del body["spec"]["template"]["spec"]["nodeClassRef"]
    with pytest.raises(ValidationError):
        NodePool.model_validate(body)
