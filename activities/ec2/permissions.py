"""Every AWS API call the provider makes, and the IAM actions each needs: the least privilege.

One list, three readers: docs/deploy.md prints the policy built from it, ``joinery doctor``
checks the worker's role against it, and a test checks it against the code (every boto3 call
in activities/ec2 is listed here, and nothing else is), so the policy cannot drift.
Some calls need more than their own action: CreateFleet runs instances and tags them, and
launching with an instance profile passes its role.

The policy is scoped as Karpenter's CloudFormation policy is: whatever creates, tags or
deletes is conditioned on the tags that name this cluster (``aws:RequestTag`` when creating,
``aws:ResourceTag`` on what exists), tagging is allowed at creation only with
``ec2:CreateAction``, and reads are limited to the region. Where Joinery tags differently from
Karpenter, the condition follows Joinery's tags (docs/deploy.md says where and why), and a test
runs the whole provider under this exact policy with IAM enforcement on.
"""

from __future__ import annotations

import json
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
    "ec2:DescribeCapacityReservations": ("ec2:DescribeCapacityReservations",),
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
    # instance status checks (node repair, with the NodeRepair feature gate)
    "ec2:DescribeInstanceStatus": ("ec2:DescribeInstanceStatus",),
    # interruption queue
    "sqs:GetQueueUrl": ("sqs:GetQueueUrl",),
    "sqs:ReceiveMessage": ("sqs:ReceiveMessage",),
    "sqs:DeleteMessage": ("sqs:DeleteMessage",),
    "sqs:ChangeMessageVisibility": ("sqs:ChangeMessageVisibility",),
}


def actions() -> list[str]:
    return sorted({a for needed in CALLS.values() for a in needed})


# The placeholders the policy carries; :func:`filled` replaces them for one cluster.
PLACEHOLDERS = ("<partition>", "<region>", "<account>", "<cluster>", "<queue>", "<node-role>")

_EC2 = "arn:<partition>:ec2:<region>"
# Any path, as Karpenter's: IAM authorizes a profile by its path, which a call naming a profile
# that does not exist yet cannot know; the tag conditions are what scope the profile actions.
_PROFILES = "arn:<partition>:iam::<account>:instance-profile/*"
_NODE_ROLE = "arn:<partition>:iam::<account>:role/<node-role>"
CLUSTER_OWNED = "aws:ResourceTag/kubernetes.io/cluster/<cluster>"
# Tags every instance, volume and fleet carries from its CreateFleet (activities/ec2/fleet.py).
_LAUNCH_REQUEST_TAGS = {
    "StringEquals": {
        "aws:RequestTag/kubernetes.io/cluster/<cluster>": "owned",
        "aws:RequestTag/eks:eks-cluster-name": "<cluster>",
    },
    "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
}
# Tags of an instance Joinery launched, checked before it is tagged again or terminated.
_INSTANCE_RESOURCE_TAGS = {
    "StringEquals": {CLUSTER_OWNED: "owned"},
    "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
}
# Launch templates are one per NodeClass and shared by its pools, so they carry the cluster's
# name in karpenter.k8s.aws/cluster (activities/ec2/launch_templates.py), not a NodePool.
_TEMPLATE_REQUEST_TAGS = {
    "StringEquals": {"aws:RequestTag/karpenter.k8s.aws/cluster": "<cluster>"},
    "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
}
_TEMPLATE_RESOURCE_TAGS = {
    "StringEquals": {"aws:ResourceTag/karpenter.k8s.aws/cluster": "<cluster>"},
}
# Instance profiles carry the cluster, region and NodeClass (activities/ec2/instance_profiles.py).
_PROFILE_REQUEST_TAGS = {
    "StringEquals": {
        "aws:RequestTag/kubernetes.io/cluster/<cluster>": "owned",
        "aws:RequestTag/topology.kubernetes.io/region": "<region>",
    },
    "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
}
_PROFILE_RESOURCE_TAGS = {
    "StringEquals": {
        CLUSTER_OWNED: "owned",
        "aws:ResourceTag/topology.kubernetes.io/region": "<region>",
    },
    "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
}
# The only tags added to an instance after its launch (activities/ec2/fleet.py claim_tags).
POST_LAUNCH_TAG_KEYS = ("Name", "karpenter.sh/nodeclaim")


def _merge(*conditions: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for condition in conditions:
        for operator, keys in condition.items():
            out.setdefault(operator, {}).update(keys)
    return out


def _statements() -> list[dict[str, Any]]:
    """Karpenter's statements (by its Sids where one matches), over Joinery's tags."""
    reads = [a for a in actions() if a.startswith(("ec2:Describe", "ec2:Get"))]
    return [
        {
            "Sid": "AllowRegionalReadActions",
            "Action": reads,
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:RequestedRegion": "<region>"}},
        },
        {"Sid": "AllowPricingReadActions", "Action": ["pricing:GetProducts"], "Resource": "*"},
        {
            "Sid": "AllowSSMReadActions",
            "Action": ["ssm:GetParameters"],
            "Resource": "arn:<partition>:ssm:<region>::parameter/aws/service/*",
        },
        {
            "Sid": "AllowAPIServerEndpointDiscovery",
            "Action": ["eks:DescribeCluster"],
            "Resource": "arn:<partition>:eks:<region>:<account>:cluster/<cluster>",
        },
        {
            "Sid": "AllowInterruptionQueueActions",
            "Action": [a for a in actions() if a.startswith("sqs:")],
            "Resource": "arn:<partition>:sqs:<region>:<account>:<queue>",
        },
        {
            # What a launch reads or creates beside the instance; each comes only with an
            # instance, whose own statement below is tag-conditioned. Joinery does not tag
            # network interfaces or spot requests, so they are here, not with the instance.
            "Sid": "AllowScopedEC2InstanceAccessActions",
            "Action": ["ec2:CreateFleet", "ec2:RunInstances"],
            "Resource": [
                f"arn:<partition>:ec2:<region>::{kind}/*" for kind in ("image", "snapshot")
            ]
            + [
                f"{_EC2}:*:{kind}/*"
                for kind in (
                    "security-group",
                    "subnet",
                    "capacity-reservation",
                    "placement-group",
                    "network-interface",
                    "spot-instances-request",
                )
            ],
        },
        {
            "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
            "Action": ["ec2:CreateFleet", "ec2:RunInstances"],
            "Resource": f"{_EC2}:*:launch-template/*",
            "Condition": _TEMPLATE_RESOURCE_TAGS,
        },
        {
            "Sid": "AllowScopedEC2InstanceActionsWithTags",
            "Action": ["ec2:CreateFleet", "ec2:RunInstances"],
            "Resource": [f"{_EC2}:*:{kind}/*" for kind in ("fleet", "instance", "volume")],
            "Condition": _LAUNCH_REQUEST_TAGS,
        },
        {
            "Sid": "AllowScopedEC2LaunchTemplateCreation",
            "Action": ["ec2:CreateLaunchTemplate"],
            "Resource": f"{_EC2}:*:launch-template/*",
            "Condition": _TEMPLATE_REQUEST_TAGS,
        },
        {
            "Sid": "AllowScopedResourceCreationTagging",
            "Action": ["ec2:CreateTags"],
            "Resource": [f"{_EC2}:*:{kind}/*" for kind in ("fleet", "instance", "volume")],
            "Condition": _merge(
                _LAUNCH_REQUEST_TAGS,
                {"StringEquals": {"ec2:CreateAction": ["CreateFleet", "RunInstances"]}},
            ),
        },
        {
            "Sid": "AllowScopedLaunchTemplateCreationTagging",
            "Action": ["ec2:CreateTags"],
            "Resource": f"{_EC2}:*:launch-template/*",
            "Condition": _merge(
                _TEMPLATE_REQUEST_TAGS,
                {"StringEquals": {"ec2:CreateAction": "CreateLaunchTemplate"}},
            ),
        },
        {
            "Sid": "AllowScopedResourceTagging",
            "Action": ["ec2:CreateTags"],
            "Resource": f"{_EC2}:*:instance/*",
            "Condition": _merge(
                _INSTANCE_RESOURCE_TAGS,
                {"ForAllValues:StringEquals": {"aws:TagKeys": list(POST_LAUNCH_TAG_KEYS)}},
            ),
        },
        {
            "Sid": "AllowScopedDeletion",
            "Action": ["ec2:TerminateInstances"],
            "Resource": f"{_EC2}:*:instance/*",
            "Condition": _INSTANCE_RESOURCE_TAGS,
        },
        {
            "Sid": "AllowScopedLaunchTemplateDeletion",
            "Action": ["ec2:DeleteLaunchTemplate"],
            "Resource": f"{_EC2}:*:launch-template/*",
            "Condition": _TEMPLATE_RESOURCE_TAGS,
        },
        {
            "Sid": "AllowPassingInstanceRole",
            "Action": ["iam:PassRole"],
            "Resource": _NODE_ROLE,
            "Condition": {
                "StringEquals": {
                    "iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]
                }
            },
        },
        {"Sid": "AllowNodeRoleRead", "Action": ["iam:GetRole"], "Resource": _NODE_ROLE},
        {
            "Sid": "AllowScopedInstanceProfileCreationActions",
            "Action": ["iam:CreateInstanceProfile"],
            "Resource": _PROFILES,
            "Condition": _PROFILE_REQUEST_TAGS,
        },
        {
            "Sid": "AllowScopedInstanceProfileTagActions",
            "Action": ["iam:TagInstanceProfile"],
            "Resource": _PROFILES,
            "Condition": _merge(_PROFILE_RESOURCE_TAGS, _PROFILE_REQUEST_TAGS),
        },
        {
            "Sid": "AllowScopedInstanceProfileActions",
            "Action": [
                "iam:AddRoleToInstanceProfile",
                "iam:DeleteInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
            ],
            "Resource": _PROFILES,
            "Condition": _PROFILE_RESOURCE_TAGS,
        },
        {
            "Sid": "AllowInstanceProfileReadActions",
            "Action": ["iam:GetInstanceProfile"],
            "Resource": _PROFILES,
        },
        {
            "Sid": "AllowUnscopedInstanceProfileListAction",
            "Action": ["iam:ListInstanceProfiles"],
            "Resource": "*",
        },
    ]


def policy(partition: str = "<partition>") -> dict[str, Any]:
    """The worker role's policy, placeholders left for the docs except ``partition``
    (``aws``, ``aws-cn``, ``aws-us-gov``), which fills the ARNs.

    Only actions the code needs appear (a statement whose actions none of CALLS needs is
    left out), and :func:`unassigned` names any needed action no statement grants."""
    needed = set(actions())
    statements = []
    for statement in _statements():
        acts = sorted(a for a in statement["Action"] if a in needed)
        if not acts:
            continue
        statements.append({"Sid": statement["Sid"], "Effect": "Allow", **statement, "Action": acts})
    text = json.dumps({"Version": "2012-10-17", "Statement": statements})
    loaded: dict[str, Any] = json.loads(text.replace("<partition>", partition))
    return loaded


def unassigned() -> list[str]:
    """Actions the code needs that no statement grants: a new call must be given its scope."""
    granted = {a for s in policy()["Statement"] for a in s["Action"]}
    return sorted(set(actions()) - granted)


def filled(
    partition: str, region: str, account: str, cluster: str, queue: str, node_role: str
) -> dict[str, Any]:
    """The policy for one cluster, every placeholder replaced (what an operator applies)."""
    text = json.dumps(policy(partition))
    for key, value in (
        ("<region>", region),
        ("<account>", account),
        ("<cluster>", cluster),
        ("<queue>", queue),
        ("<node-role>", node_role),
    ):
        text = text.replace(key, value)
    result: dict[str, Any] = json.loads(text)
    return result


def simulations(document: dict[str, Any], account: str) -> list[dict[str, Any]]:
    """For each statement of a filled policy, a request Joinery makes under it, as
    ``iam:SimulatePrincipalPolicy`` takes it: the actions, one resource ARN of the kind the
    statement names, and the context keys with the values Joinery sends (a ``StringLike``
    pattern gets a sample value). ``joinery doctor`` simulates these against the worker's
    role, so a tag-conditioned statement is checked with the tags, not reported missing for
    want of them. Statements still holding a placeholder are left out."""
    out = []
    for statement in document["Statement"]:
        if any(p in json.dumps(statement) for p in PLACEHOLDERS):
            continue
        resources = statement["Resource"]
        resource = resources[0] if isinstance(resources, list) else resources
        if resource != "*":
            resource = resource.replace(":*:", f":{account}:").replace("*", "joinery-doctor")
        context = []
        for operator, keys in statement.get("Condition", {}).items():
            for key, value in keys.items():
                values = value if isinstance(value, list) else [value]
                if operator.startswith("ForAllValues:"):
                    context.append(
                        {
                            "ContextKeyName": key,
                            "ContextKeyValues": values,
                            "ContextKeyType": "stringList",
                        }
                    )
                    continue
                sample = "joinery-doctor" if operator.startswith("StringLike") else values[0]
                context.append(
                    {
                        "ContextKeyName": key,
                        "ContextKeyValues": [sample],
                        "ContextKeyType": "string",
                    }
                )
        simulation: dict[str, Any] = {"ActionNames": statement["Action"], "ContextEntries": context}
        if resource != "*":
            simulation["ResourceArns"] = [resource]
        out.append(simulation)
    return out
