"""The existing and in-flight nodes of a run as targets: what each holds, whether a pod class
may join one, and which of them could hold a class at all.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

from models import labels as L
from scheduling.pods import Pod
from scheduling.solving.domains import TopologyDomains
from scheduling.solving.podclass import PodClass
from scheduling.solving.rejections import NodeRejections
from scheduling.solving.view import ProblemView
from scheduling.taints import untolerated
from scheduling.targets import (
    ExistingTarget,
    Failure,
    Target,
    ports_conflict,
    undefined_allowed,
    vec_add,
    vec_fits,
)
from scheduling.volumes import Volumes, attach, over_limit

# Told of every pod placed (the class, the pod, the target it joined).
Placed = Callable[[PodClass, Pod, Target], None]


class RoomIndex:
    """Existing nodes by the cpu and memory they had free when the solve began."""

    def __init__(self, nodes: Sequence[ExistingTarget]) -> None:
        free = [(t.allocatable[0] - t.used[0], t.allocatable[1] - t.used[1]) for t in nodes]
        self._order = sorted(range(len(nodes)), key=lambda i: free[i][0])
        self._cpu = [free[i][0] for i in self._order]
        self._memory = [free[i][1] for i in self._order]

    def holding(self, need: Sequence[int]) -> list[int]:
        """Indices, ascending, of the nodes whose free cpu and memory cover ``need``."""
        cpu, memory = need[0], need[1]
        start = bisect_left(self._cpu, cpu)
        mem = self._memory
        order = self._order
        return sorted(order[k] for k in range(start, len(order)) if mem[k] >= memory)


class ExistingNodes:
    """The schedulable nodes of the problem, in order, as ``ExistingTarget``s that pods
    join (``targets``), with what the solve knows of their room and rejections."""

    def __init__(
        self,
        view: ProblemView,
        domains: TopologyDomains,
        rejections: NodeRejections | None,
        placed: Placed,
    ) -> None:
        """``rejections``: the nodes known to reject a pod class (one disruption round's);
        ``placed``: told of every pod a node takes."""
        self.problem = view.problem
        self.catalog = view.catalog
        self.allow_undefined = view.allow_undefined
        self.rejections = rejections
        self._topology_of = domains.topology_of
        self._placed = placed
        self.targets: list[ExistingTarget] = []
        self._room_index: RoomIndex | None = None
        # Existing nodes that had room for a request vector (cpu, memory) when the solve began.
        self._held: dict[tuple[int, int], list[ExistingTarget]] | None = None
        dims = tuple(view.dims)
        for node, facts in zip(view.problem.nodes, view.facts(), strict=True):
            if not node.schedulable:
                continue
            used, alloc = facts.vectors(dims, view.vec)
            volumes: dict[str, set[str]] = {}
            if node.volume_limits:
                for p in node.pods:
                    if p.key in self.problem.volumes:
                        attach(volumes, self.problem.volumes[p.key])
            # A node's pod capacity: missing dims (e.g. pods) mean zero room, as the kubelet.
            t = ExistingTarget(
                hostname=node.labels.get(L.HOSTNAME, node.name),
                requirements=node.requirements,
                taints=node.taints,
                used=list(used),
                host_ports=set(facts.ports),
                pods=list(node.pods),
                base_used=list(used),
                name=node.name,
                allocatable=alloc,
                labels=node.labels,
                nodepool=node.nodepool,
                in_flight=node.in_flight,
                volume_limits=node.volume_limits,
                volumes=volumes,
            )
            self.targets.append(t)

    def try_existing(self, cls: PodClass, pod: Pod, t: ExistingTarget) -> Failure | None:
        """Add the pod to the node, or say why it does not join it."""
        vols = self.problem.volumes.get(pod.key) if t.volume_limits else None
        f = self._existing_failure(cls, t, vols)
        if f is not None:
            if f.local and cls.rejected_by is not None and not t.new_pods:
                assert self.rejections is not None
                self.rejections.note(cls.rejected_by, t.name)
            return f
        t.used = vec_add(t.used, cls.vec)
        t.pods.append(pod)
        t.new_pods.append(pod)
        t.host_ports.update(cls.host_ports)
        if vols:
            attach(t.volumes, vols)
        self._placed(cls, pod, t)
        return None

    def _existing_failure(
        self, cls: PodClass, t: ExistingTarget, vols: Volumes | None
    ) -> Failure | None:
        if untolerated(t.taints, cls.tolerations) is not None:
            return Failure("taint not tolerated", True, local=True)
        if cls.host_ports and ports_conflict(t.host_ports, cls.host_ports):
            return Failure("host port in use", True, local=True)
        if vols and over_limit(t.volumes, t.volume_limits, vols):  # per pod: not monotone
            return Failure("volume attach limit reached", False)
        undefined = undefined_allowed(t, self.allow_undefined)
        if self.catalog.label_conflict(t.requirements, cls.reqs, undefined) is not None:
            return Failure("labels do not match", True, local=True)
        need = vec_add(t.used, cls.vec)
        if not vec_fits(need, t.allocatable):
            return Failure("not enough room", True)  # room: RoomIndex
        topo = self._topology_of(cls, t, t.requirements)
        return topo if isinstance(topo, Failure) else None

    def with_room(self, cls: PodClass) -> list[ExistingTarget]:
        """The nodes, in order, less those that would reject the class for good: too little
        cpu or memory free when the solve began (room only shrinks), or known to reject it
        (``NodeRejections``). Leaving them out changes no placement; on a consolidated
        cluster it spares most of the tries. The nodes with room are listed once per request
        vector (most classes of a solve share a few)."""
        held = self._held
        if held is None:
            held = self._held = {}
        need = (cls.vec[0], cls.vec[1])
        picked = held.get(need)
        if picked is None:
            room = self._room_index
            if room is None:
                room = self._room_index = RoomIndex(self.targets)
            picked = held[need] = [self.targets[i] for i in room.holding(cls.vec)]
        gone = cls.rejected_by
        if gone:
            picked = [t for t in picked if t.name not in gone]
        return picked
