"""The adapters every activity runs on, shared by one worker's activity threads.

Planning, lifecycle, disruption and garbage-collection activities all take one ``Deps``:
the worker builds it once (``worker.running.app``) and hands it to each activity group.
How their failures reach the workflows is ``activities.failures``; long calls heartbeat
through ``activities.heartbeating``; timestamps are ``activities.timestamps``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.kubernetes.client import Kube
from activities.kubernetes.node_index import NodeIndex
from activities.kubernetes.nodeclass_store import NodeClassStore
from activities.kubernetes.object_cache import WatchedObjects
from activities.metrics import Counters
from models import contract
from models.policies import Policies
from scheduling.solving.kept import KeptCatalog

if TYPE_CHECKING:
    from activities.cloud.provider import CloudProvider


@dataclass
class Deps:
    """The adapters one worker shares among its activity threads."""

    kube: Kube
    # The cluster's cloud (activities.cloud): the one --provider chose.
    cloud: CloudProvider | None = None
    counters: Counters = field(default_factory=Counters)
    cluster: str = "joinery"
    # Where NodeClaim lifecycles run; "" means the queue of the activity that starts them.
    lifecycle_queue: str = ""
    # EC2NodeClasses as last read or watched (the worker's watcher feeds it); None: every
    # launch reads its NodeClass from the API server.
    nodeclass_store: NodeClassStore | None = None
    # Node names by providerID from the worker's Node watch; None (or not synced): a
    # registration check that was not told the Node's name lists the pool's Nodes.
    node_index: NodeIndex | None = None
    # Pods, Nodes and NodeClaims from the worker's watches, for the provisioning round's
    # reads; None (or a watch not synced): the round lists them.
    watched: WatchedObjects | None = None
    # What one provisioning round's solve keeps for the next (scheduling.solving.kept).
    kept_catalog: KeptCatalog = field(default_factory=KeptCatalog)
    # Karpenter's MIN_VALUES_POLICY, PREFERENCE_POLICY and FEATURE_GATES (models.policies).
    policies: Policies = field(default_factory=Policies)

    def lifecycle_task_queue(self) -> str:
        """The queue to start a NodeClaim lifecycle on. The worker names it: the activities
        that start lifecycles run on the cluster workflows' own queue (``worker.running.app``)."""
        return self.lifecycle_queue or activity.info().task_queue

    def provider(self) -> CloudProvider:
        if self.cloud is None:
            raise ApplicationError(
                "this worker has no cloud provider configured",
                type=contract.ERR_NO_PROVIDER,
                non_retryable=True,
            )
        return self.cloud
