"""Status condition types Karpenter sets on its objects (NodeClaim, NodePool, EC2NodeClass)."""

from __future__ import annotations

# NodeClaim lifecycle, in the order a healthy claim gains them.
LAUNCHED = "Launched"
REGISTERED = "Registered"
INITIALIZED = "Initialized"
READY = "Ready"
# NodeClaim disruption and termination.
DRIFTED = "Drifted"
EMPTY = "Empty"
CONSOLIDATABLE = "Consolidatable"
DISRUPTION_REASON = "DisruptionReason"
DRAINED = "Drained"
VOLUMES_DETACHED = "VolumesDetached"
INSTANCE_TERMINATING = "InstanceTerminating"
# Conditions whose all being True makes a NodeClaim Ready.
NODECLAIM_READINESS = (LAUNCHED, REGISTERED, INITIALIZED)

# NodePool and EC2NodeClass.
VALIDATION_SUCCEEDED = "ValidationSucceeded"
NODECLASS_READY = "NodeClassReady"
NODEPOOL_READINESS = (VALIDATION_SUCCEEDED, NODECLASS_READY)
SUBNETS_READY = "SubnetsReady"
SECURITY_GROUPS_READY = "SecurityGroupsReady"
AMIS_READY = "AMIsReady"
INSTANCE_PROFILE_READY = "InstanceProfileReady"
