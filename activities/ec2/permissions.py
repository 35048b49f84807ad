"""Every AWS API call the provider makes, and the IAM actions each needs: the least privilege.

One list, three readers: docs/deploy.md prints the policy built from it, ``joinery doctor``
checks the worker's role against it, and a test checks it against the code (every boto3 call
in activities/ec2 is listed here, and nothing else is), so the policy cannot drift.
Some calls need more than their own action: CreateFleet runs instances and tags them, and
launching with an instance profile passes its role.
"""

from __future__ import annotations

from typing import Any

# "service:Operation" as boto3 calls it → the IAM actions that call needs.
CALLS: dict[str, tuple[str, ...]] = {
    # cluster discovery
    "eks:DescribeCluster": ("eks:DescribeCluster",),
    # catalog and prices
    "ec2:DescribeInstanceTypes": ("ec2:DescribeInstanceTypes",),
    "ec2:DescribeInstanceTypeOfferings": ("ec2:DescribeInstanceTypeOfferings",),
    "ec2:DescribeSpotPriceHistory": ("ec2:DescribeSpotPriceHistory",),
    "pricing:GetProducts": ("pricing:GetProducts",),
    # NodeClass resolution
    "ec2:DescribeSubnets": ("ec2:DescribeSubnets",),
    "ec2:DescribeSecurityGroups": ("ec2:DescribeSecurityGroups",),
    "ec2:DescribeImages": ("ec2:DescribeImages",),
    "ssm:GetParameters": ("ssm:GetParameters",),
    "ec2:DescribePlacementGroups": ("ec2:DescribePlacementGroups",),
    # instance profiles
    "iam:GetRole": ("iam:GetRole",),
    "iam:GetInstanceProfile": ("iam:GetInstanceProfile",),
    "iam:CreateInstanceProfile": ("iam:CreateInstanceProfile", "iam:TagInstanceProfile"),
    "iam:AddRoleToInstanceProfile": ("iam:AddRoleToInstanceProfile", "iam:PassRole"),
    "iam:RemoveRoleFromInstanceProfile": ("iam:RemoveRoleFromInstanceProfile",),
    "iam:DeleteInstanceProfile": ("iam:DeleteInstanceProfile",),
    "iam:ListInstanceProfiles": ("iam:ListInstanceProfiles",),
    # launch templates and instances
    "ec2:DescribeLaunchTemplates": ("ec2:DescribeLaunchTemplates",),
    "ec2:CreateLaunchTemplate": ("ec2:CreateLaunchTemplate", "ec2:CreateTags"),
    "ec2:DeleteLaunchTemplate": ("ec2:DeleteLaunchTemplate",),
    "ec2:CreateFleet": ("ec2:CreateFleet", "ec2:RunInstances", "ec2:CreateTags", "iam:PassRole"),
    "ec2:CreateTags": ("ec2:CreateTags",),  # a batched launch's claim tag, per instance
    "ec2:DescribeInstances": ("ec2:DescribeInstances",),
    "ec2:TerminateInstances": ("ec2:TerminateInstances",),
    # interruption queue
    "sqs:GetQueueUrl": ("sqs:GetQueueUrl",),
    "sqs:ReceiveMessage": ("sqs:ReceiveMessage",),
    "sqs:DeleteMessage": ("sqs:DeleteMessage",),
    "sqs:ChangeMessageVisibility": ("sqs:ChangeMessageVisibility",),
}

# Where an action can be narrowed to resources, the ARN pattern (placeholders in <>; the
# partition is aws, aws-cn or aws-us-gov: activities/ec2/partitions.py).
_SCOPED: dict[str, str] = {
    "eks:": "arn:<partition>:eks:<region>:<account>:cluster/<cluster>",
    "sqs:": "arn:<partition>:sqs:<region>:<account>:<queue>",
    "iam:PassRole": "arn:<partition>:iam::<account>:role/<node-role>",
    "iam:GetRole": "arn:<partition>:iam::<account>:role/<node-role>",
    "iam:": "arn:<partition>:iam::<account>:instance-profile/karpenter/<region>/<cluster>/*",
    "ec2:TerminateInstances": "arn:<partition>:ec2:<region>:<account>:instance/*",
    "ec2:DeleteLaunchTemplate": "arn:<partition>:ec2:<region>:<account>:launch-template/*",
}
# Joinery deletes only what it tagged as its own at creation.
_CONDITIONS: dict[str, dict[str, Any]] = {
    "ec2:TerminateInstances": {
        "StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/<cluster>": "owned"}
    },
    "ec2:DeleteLaunchTemplate": {
        "StringEquals": {"aws:ResourceTag/karpenter.k8s.aws/cluster": "<cluster>"}
    },
}


def actions() -> list[str]:
    return sorted({a for needed in CALLS.values() for a in needed})


def _resource(action: str) -> str:
    if action in _SCOPED:
        return _SCOPED[action]
    if action.startswith("iam:ListInstanceProfiles"):
        return "*"
    for prefix, arn in _SCOPED.items():
        if prefix.endswith(":") and action.startswith(prefix):
            return arn
    return "*"


def policy(partition: str = "<partition>") -> dict[str, Any]:
    """The worker role's policy: one statement per resource scope, deletions tag-conditioned.

    ``partition`` fills the ARNs' partition (``aws``, ``aws-cn``, ``aws-us-gov``); the docs
    print it as a placeholder."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for action in actions():
        key = action if action in _CONDITIONS else ""
        resource = _resource(action).replace("<partition>", partition)
        grouped.setdefault((resource, key), []).append(action)
    statements = []
    for (resource, conditioned), acts in sorted(grouped.items()):
        statement: dict[str, Any] = {"Effect": "Allow", "Action": acts, "Resource": resource}
        if conditioned:
            statement["Condition"] = _CONDITIONS[conditioned]
        statements.append(statement)
    return {"Version": "2012-10-17", "Statement": statements}
