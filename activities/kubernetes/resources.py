"""Names Joinery shares with Karpenter: API groups, resources, finalizers, labels, taints."""

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

# Held on NodeClaims and Nodes until the instance behind them is gone.
TERMINATION_FINALIZER = "karpenter.sh/termination"

NODEPOOL_LABEL = "karpenter.sh/nodepool"
NODECLAIM_LABEL = "karpenter.sh/nodeclaim"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
REGISTERED_LABEL = "karpenter.sh/registered"
INITIALIZED_LABEL = "karpenter.sh/initialized"
DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"

# Put on a node once Joinery has decided to take it away, so nothing new lands there.
DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
# Put on a node launched but not yet initialized by Joinery.
UNREGISTERED_TAINT_KEY = "karpenter.sh/unregistered"
