"""The IAM evaluation sandbox/ec2/authorization.py adds, checked against IAM's documented rules,
and the gap in moto's own evaluation it fills."""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto.iam.access_control import IAMPolicy, PermissionResult

from sandbox.ec2.authorization import Authorization, allowed

INSTANCE = "arn:aws:ec2:us-east-1:123456789012:instance/i-1"
OWNED = "aws:ResourceTag/kubernetes.io/cluster/c"


def policy(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def allow(condition: dict[str, Any], action: str = "ec2:TerminateInstances") -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": INSTANCE, "Condition": condition}


def auth(
    context: dict[str, list[str]] | None = None, action: str = "ec2:TerminateInstances"
) -> Authorization:
    return Authorization(action, INSTANCE, {k.lower(): v for k, v in (context or {}).items()})


def test_moto_alone_ignores_conditions_and_resource_arns() -> None:
    """Why the emulation exists: moto permits a call whose tag condition fails, and its EC2
    requests carry the resource ``*``, which no ARN-scoped statement matches."""
    doc = policy(allow({"StringEquals": {OWNED: "owned"}}))
    moto_view = IAMPolicy(json.dumps(doc))
    assert moto_view.is_action_permitted("ec2:TerminateInstances", INSTANCE) == (
        PermissionResult.PERMITTED
    )
    assert moto_view.is_action_permitted("ec2:TerminateInstances", "*") == PermissionResult.NEUTRAL
    assert not allowed([doc], auth())  # the instance has no cluster tag: denied
    assert allowed([doc], auth({OWNED: ["owned"]}))


def test_string_operators_and_if_exists() -> None:
    equals = policy(allow({"StringEquals": {OWNED: ["owned", "shared"]}}))
    assert allowed([equals], auth({OWNED: ["shared"]}))
    assert not allowed([equals], auth({OWNED: ["Owned"]}))  # case matters for values
    like = policy(allow({"StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}}))
    assert allowed([like], auth({"aws:ResourceTag/karpenter.sh/nodepool": ["default"]}))
    assert not allowed([like], auth())  # a missing key never matches a positive operator
    maybe = policy(allow({"StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": "c"}}))
    assert allowed([maybe], auth())
    assert not allowed([maybe], auth({"aws:RequestTag/eks:eks-cluster-name": ["other"]}))
    not_equals = policy(allow({"StringNotEquals": {OWNED: "owned"}}))
    assert allowed([not_equals], auth())  # negated operators match a missing key
    assert not allowed([not_equals], auth({OWNED: ["owned"]}))


def test_set_qualifiers() -> None:
    keys = ["Name", "karpenter.sh/nodeclaim"]
    only = policy(allow({"ForAllValues:StringEquals": {"aws:TagKeys": keys}}, "ec2:CreateTags"))
    assert allowed([only], auth({"aws:TagKeys": ["Name"]}, "ec2:CreateTags"))
    assert not allowed([only], auth({"aws:TagKeys": ["Name", "team"]}, "ec2:CreateTags"))
    assert allowed([only], auth(action="ec2:CreateTags"))  # ForAllValues over nothing holds
    anyof = policy(allow({"ForAnyValue:StringEquals": {"aws:TagKeys": keys}}, "ec2:CreateTags"))
    assert allowed([anyof], auth({"aws:TagKeys": ["team", "Name"]}, "ec2:CreateTags"))
    assert not allowed([anyof], auth(action="ec2:CreateTags"))


def test_deny_wins_and_resources_and_actions_match_by_wildcard() -> None:
    everything = policy({"Effect": "Allow", "Action": "ec2:*", "Resource": "*"})
    assert allowed([everything], auth())
    deny = policy({"Effect": "Deny", "Action": "ec2:Terminate*", "Resource": "*"})
    assert not allowed([everything, deny], auth())
    elsewhere = policy(
        {
            "Effect": "Allow",
            "Action": "ec2:TerminateInstances",
            "Resource": "arn:aws:ec2:*:*:volume/*",
        }
    )
    assert not allowed([elsewhere], auth())
    assert not allowed([], auth())  # no policy: implicit deny


def test_an_operator_not_emulated_is_refused_not_allowed() -> None:
    doc = policy(allow({"NumericLessThan": {"aws:MultiFactorAuthAge": "3600"}}))
    with pytest.raises(ValueError, match="NumericLessThan"):
        allowed([doc], auth())
