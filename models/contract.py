"""The Temporal contract, in one place: workflow types and ids, task queue, activity names,
signal/update/query names, search attribute names and error types.

Workflows, activities, the worker, the CLI and tests all import these names; none spells
them again. Renaming a workflow type, an activity, a signal or an update breaks the replay
of running workflows, so treat every value here as a published interface.

Ids and the task queue carry the cluster name so several clusters can share one Temporal
namespace: ``nodeclaim-<name>@<cluster>``, ``provisioner@<cluster>``,
``disruption@<cluster>``, ``garbage-collection@<cluster>``, task queue ``joinery@<cluster>``
for the lifecycles and ``joinery@<cluster>-cluster`` for the cluster's own workflows.
``@`` appears neither in a Kubernetes object name nor in an EKS cluster name, so an id names
one object of one cluster.
"""

from __future__ import annotations

# -- workflow types ------------------------------------------------------------------------
NODECLAIM_WORKFLOW = "NodeClaim"
PROVISIONER_WORKFLOW = "Provisioner"
DISRUPTION_WORKFLOW = "Disruption"
GARBAGE_COLLECTION_WORKFLOW = "GarbageCollection"

NODECLAIM_ID_PREFIX = "nodeclaim-"

# The NodeClaim workflow's shape that a fresh start asks for (its input's ``shape``): which
# path each step takes, fixed for the whole run instead of by ``workflow.patched`` markers
# (each one cost a marker and a ``TemporalChangeVersion`` upsert per lifecycle). 0, what an
# input without the field means, is every run started before shapes existed: those decide with
# their markers as they always did. 1: the short calls and the drain pass are local
# activities and expiry consults ``joinery pause``. 2: registration and initialization are
# checked in one call, and termination begins with one call that goes as far as it can
# (``TERMINATION_PASS``). 3: the launch is a local activity too. workflows/nodeclaim/shape.py
# reads it; raise it (never reuse a value) when a later change takes another path.
NODECLAIM_SHAPE = 3


def nodeclaim_id(cluster: str, nodeclaim: str) -> str:
    """The lifecycle workflow of one NodeClaim."""
    return f"{NODECLAIM_ID_PREFIX}{nodeclaim}@{cluster}"


def provisioner_id(cluster: str) -> str:
    """The cluster's provisioner, which also holds ``joinery pause`` state."""
    return f"provisioner@{cluster}"


def disruption_id(cluster: str) -> str:
    """The cluster's disruption workflow (consolidation, emptiness, drift rounds)."""
    return f"disruption@{cluster}"


def garbage_collection_id(cluster: str) -> str:
    """The cluster's garbage collection (orphan instances, claims without an instance or a
    NodePool, unused launch templates)."""
    return f"garbage-collection@{cluster}"


def task_queue(cluster: str) -> str:
    """The default task queue of a cluster's workers: NodeClaim lifecycles and their
    activities."""
    return f"joinery@{cluster}"


def cluster_workflows_queue(task_queue: str) -> str:
    """The queue of the cluster's own workflows (provisioner, disruption, garbage collection)
    and their activities, beside the lifecycles' ``task_queue``.

    On one queue, a provisioner's workflow task waited behind every lifecycle's for the
    worker's few workflow task slots (a 250-pod burst's second round came 92-209 s late);
    on their own queue they get slots and activity threads of their own.
    """
    return f"{task_queue}-cluster"


# -- signals, updates, queries -------------------------------------------------------------
# NodeClaim workflow
SIGNAL_DELETED = "deleted"
SIGNAL_INTERRUPTED = "interrupted"
SIGNAL_NODE_CHANGED = "node_changed"  # argument: the Node's name (optional)
UPDATE_DISRUPT = "disrupt"
# Provisioner workflow
SIGNAL_PODS_PENDING = "pods_pending"
UPDATE_PAUSE = "pause"
UPDATE_RESUME = "resume"
# Provisioner: the batch window the starting worker was given (BATCH_*_DURATION).
SIGNAL_BATCHING = "batching"
# Disruption workflow
SIGNAL_CLUSTER_CHANGED = "cluster_changed"
# Provisioner, disruption and garbage collection: continue as new on the queue named
# (argument: the task queue; ``cluster_workflows_queue``).
SIGNAL_MOVE_TO_QUEUE = "move_to_queue"
# Every workflow answers this query with its status dataclass.
QUERY_STATUS = "status"

# -- search attributes (Keyword; registered on the namespace by ``joinery dev``) -----------
SA_NODEPOOL = "NodePool"
SA_NODECLAIM = "NodeClaim"
SA_INSTANCE_TYPE = "InstanceType"
SA_CAPACITY_TYPE = "CapacityType"
SA_ZONE = "Zone"
SA_PHASE = "Phase"
SA_DISRUPTION_REASON = "DisruptionReason"
SEARCH_ATTRIBUTES = (
    SA_NODEPOOL,
    SA_NODECLAIM,
    SA_INSTANCE_TYPE,
    SA_CAPACITY_TYPE,
    SA_ZONE,
    SA_PHASE,
    SA_DISRUPTION_REASON,
)


# -- activity names ------------------------------------------------------------------------
class NodeClaimActivity:
    """The NodeClaim lifecycle's activities."""

    PREPARE = "nodeclaim.prepare"
    LAUNCH = "nodeclaim.launch"
    REGISTER = "nodeclaim.register"
    INITIALIZE = "nodeclaim.initialize"
    # Shape 2: the registration check, and once the Node is there the initialization check,
    # in one call.
    REGISTER_AND_INITIALIZE = "nodeclaim.register_and_initialize"
    BEGIN_TERMINATION = "nodeclaim.begin_termination"
    DRAIN = "nodeclaim.drain"
    VOLUMES = "nodeclaim.volumes"
    TERMINATE_INSTANCE = "nodeclaim.terminate_instance"
    FINALIZE = "nodeclaim.finalize"
    DISRUPTION_HOLD = "nodeclaim.disruption_hold"
    # Shape 2: begin termination, one drain pass, the volume check, terminate the instance,
    # finalize, in order, stopping at the first step that must wait.
    TERMINATION_PASS = "nodeclaim.termination_pass"


class ProvisioningActivity:
    """The provisioner's activities."""

    # Plans and creates a round's NodeClaims, returns their names.
    PROVISION = "provisioning.plan_and_create"
    START = "provisioning.start_lifecycles"
    # Rounds recorded before PROVISION: the plan (with the claims' bodies), then the creates.
    PLAN = "provisioning.plan"
    CREATE = "provisioning.create_nodeclaims"


class DisruptionActivity:
    """The disruption workflow's activities."""

    PAUSE_STATE = "disruption.pause_state"
    COMPUTE = "disruption.compute"
    MARK = "disruption.mark"
    UNMARK = "disruption.unmark"
    LAUNCH_REPLACEMENTS = "disruption.launch_replacements"
    REPLACEMENTS_INITIALIZED = "disruption.replacements_initialized"
    DELETE_NODECLAIMS = "disruption.delete_nodeclaims"


class GarbageCollectionActivity:
    """The garbage-collection workflow's activities, one per kind of leftover."""

    ORPHAN_INSTANCES = "gc.orphan_instances"
    CLAIMS_WITHOUT_INSTANCE = "gc.claims_without_instance"
    CLAIMS_WITHOUT_NODEPOOL = "gc.claims_without_nodepool"
    LAUNCH_TEMPLATES = "gc.launch_templates"


# -- error types (ApplicationError.type) ---------------------------------------------------
ERR_INVALID_ARGUMENT = "InvalidArgument"
ERR_ALREADY_PAUSED = "AlreadyPaused"
ERR_NOT_PAUSED = "NotPaused"
ERR_NOT_FOUND = "NotFound"
ERR_ALREADY_TERMINATING = "AlreadyTerminating"
ERR_NO_PROVIDER = "NoProvider"
ERR_INSUFFICIENT_CAPACITY = "InsufficientCapacity"
# Also the reason of a NodePool's NodeClassReady=False when its EC2NodeClass does not exist.
ERR_NODECLASS_NOT_FOUND = "NodeClassNotFound"
