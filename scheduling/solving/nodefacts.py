"""What a solve reads from an existing node's pods and labels, worked out once per node.

A disruption round solves hundreds of times over the same nodes; each solve used to walk
every pod of every node again (to sum what they use, count them for topology, collect their
namespaces and selector keys). ``NodeFacts`` holds those answers for one node as it is; a
node whose pods, labels or allocatable change is a new ``NodeInfo`` (or a new list) and gets
new facts, so an answer is never stale.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from models.resources import Resources, add
from scheduling.pods import Pod
from scheduling.problem import NodeInfo

Port = tuple[str, int, str]
# One kind of pod on a node: (one of them, how many, a number naming its namespace and labels
# (what topology groups select on), a number naming its namespace and anti-affinity terms
# when it has any). The numbers come from one table per cache, so equal means alike.
Shape = tuple[Pod, int, int, int | None]
# A node as topology counts see it: its name and the identities of its pods list and labels.
NodeKey = tuple[str, int, int]


@dataclass(eq=False)
class NodeFacts:
    node: NodeInfo
    pods: list[Pod]
    labels: dict[str, str]
    allocatable: Resources
    shapes: list[Shape]
    namespaces: frozenset[str]
    selector_keys: frozenset[str]
    label_items: frozenset[tuple[str, str]]
    requests: Resources
    ports: frozenset[Port]
    key: NodeKey
    owners: list[Shape]  # the shapes with anti-affinity terms
    _vectors: dict[tuple[str, ...], tuple[list[int], list[int]]] = field(default_factory=dict)
    _last: tuple[tuple[str, ...], tuple[list[int], list[int]]] | None = None

    def current(self, node: NodeInfo) -> bool:
        return (
            self.node is node
            and self.pods is node.pods
            and self.labels is node.labels
            and self.allocatable is node.allocatable
        )

    def vectors(
        self, dims: tuple[str, ...], vec: Callable[[Resources], list[int]]
    ) -> tuple[list[int], list[int]]:
        """(used, allocatable) over ``dims``; callers copy ``used`` before changing it."""
        last = self._last
        if last is not None and last[0] == dims:
            return last[1]
        hit = self._vectors.get(dims)
        if hit is None:
            hit = self._vectors[dims] = (vec(self.requests), vec(self.allocatable))
        self._last = (dims, hit)
        return hit


def node_facts(
    node: NodeInfo,
    selector_keys: Callable[[Sequence[Pod]], frozenset[str]],
    names: dict[tuple[object, ...], int],
) -> NodeFacts:
    requests: Resources = {}
    ports: set[Port] = set()
    for p in node.pods:
        requests = add(requests, p.requests)
        ports.update(p.host_ports)
    shapes = pod_shapes(node.pods, names)
    return NodeFacts(
        node=node,
        pods=node.pods,
        labels=node.labels,
        allocatable=node.allocatable,
        shapes=shapes,
        namespaces=frozenset(p.namespace for p in node.pods),
        selector_keys=selector_keys(node.pods),
        label_items=frozenset(node.labels.items()),
        requests=requests,
        ports=frozenset(ports),
        key=(node.name, id(node.pods), id(node.labels)),
        owners=[s for s in shapes if s[3] is not None],
    )


def pod_shapes(pods: list[Pod], names: dict[tuple[object, ...], int]) -> list[Shape]:
    """The pods as shapes (see ``Shape``), alike in namespace, labels and anti-affinity, in the
    order each first appears: all that counting them for topology looks at. ``names`` numbers
    each distinct key (grown as needed)."""
    first: dict[tuple[object, ...], Pod] = {}
    count: dict[tuple[object, ...], int] = {}
    for p in pods:
        key = (p.namespace, tuple(p.labels.items()), p.anti_affinity)
        if key in first:
            count[key] += 1
        else:
            first[key] = p
            count[key] = 1
    return [
        (
            p,
            count[key],
            _number(names, ("labels", p.namespace, *p.labels.items())),
            _number(names, ("anti", p.namespace, p.anti_affinity)) if p.anti_affinity else None,
        )
        for key, p in first.items()
    ]


def _number(names: dict[tuple[object, ...], int], key: tuple[object, ...]) -> int:
    found = names.get(key)
    if found is None:
        found = names[key] = len(names)
    return found
