"""Where Karpenter's custom resources live in the API (labels, taints and annotations are in
``models.labels``, condition types in ``models.conditions``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CustomResource:
    """Where a custom resource lives in the API (all of Karpenter's are cluster-scoped)."""

    group: str
    version: str
    plural: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


NODEPOOL = CustomResource("karpenter.sh", "v1", "nodepools", "NodePool")
NODECLAIM = CustomResource("karpenter.sh", "v1", "nodeclaims", "NodeClaim")
EC2NODECLASS = CustomResource("karpenter.k8s.aws", "v1", "ec2nodeclasses", "EC2NodeClass")
AKSNODECLASS = CustomResource("karpenter.azure.com", "v1beta1", "aksnodeclasses", "AKSNodeClass")
