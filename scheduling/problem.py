"""The solver's input, already parsed: pools, instance types, pods, nodes, daemon sets."""

from __future__ import annotations

from dataclasses import dataclass, field

from models.instancetype import InstanceType
from models.nodepool import NodePool
from models.policies import Policies
from models.requirements import Requirements
from models.resources import Resources
from scheduling.pods import Pod
from scheduling.taints import Taint


@dataclass(eq=False)
class NodeInfo:
    """A Node that exists, or a NodeClaim still launching (``in_flight``)."""

    name: str
    labels: dict[str, str]
    requirements: Requirements
    taints: tuple[Taint, ...]
    allocatable: Resources
    capacity: Resources
    pods: list[Pod] = field(default_factory=list)
    nodepool: str | None = None
    in_flight: bool = False
    schedulable: bool = True
    # Volume attach limit per CSI driver, from the node's CSINode (none: unlimited).
    volume_limits: dict[str, int] = field(default_factory=dict)


@dataclass
class Problem:
    nodepools: list[NodePool]
    # The round's catalog: every pool's, unless ``pool_instance_types`` gives it its own.
    instance_types: list[InstanceType]
    pending: list[Pod]
    nodes: list[NodeInfo] = field(default_factory=list)
    daemonsets: list[Pod] = field(default_factory=list)
    # Extra node requirements per pending pod, from its volumes (pod key → requirements).
    volume_requirements: dict[str, Requirements] = field(default_factory=dict)
    # CSI volumes per pod (pod key → driver → volume ids), pending and bound pods alike.
    volumes: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    # Pods rejected before solving (pod key → reason), reported as unschedulable.
    rejected: dict[str, str] = field(default_factory=dict)
    # Labels of the Namespace documents given (namespace name → labels).
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    # A pool's own catalog (pool name -> types), as Karpenter asks the cloud provider for
    # each NodePool's: its NodeClass decides the zones it can buy in (subnets) and what a
    # pod can use of a type (AMI family, kubelet reserve, maxPods). Pools whose views are
    # alike share one list object: what the solver keeps is kept per list.
    pool_instance_types: dict[str, list[InstanceType]] = field(default_factory=dict)
    # Karpenter's MIN_VALUES_POLICY, PREFERENCE_POLICY and feature gates (models.policies).
    policies: Policies = field(default_factory=Policies)
    # The zone to pin a new claim to when a pod's zonal spread or affinity pins its zone and
    # allows this one among others (Karpenter pins any least-filled zone; the solver the
    # cheapest for the pod at hand): consolidation tries each, as the pods together may be
    # cheaper in another zone. A spread allows the hint within its skew, not only when it
    # is least filled (the kube-scheduler admits the pod there; docs/disruption.md,
    # "Exactness"). None: the cheapest.
    zone_hint: str | None = None

    def catalog_of(self, pool: str) -> list[InstanceType]:
        """The instance types the pool named ``pool`` can launch."""
        return self.pool_instance_types.get(pool, self.instance_types)

    def catalogs(self) -> tuple[list[InstanceType], ...]:
        """Every distinct catalog (by identity) the pools use, the round's first; one
        entry when every pool sees the round's catalog."""
        out = [self.instance_types]
        for types in self.pool_instance_types.values():
            if all(types is not seen for seen in out):
                out.append(types)
        return tuple(out)
