"""Where a pod can go: an existing node (or in-flight claim) or a claim opened in this run.

Both kinds answer one question, ``try_add``: can this pod join, and if so with which narrowed
requirements? A failure says whether it is *monotone* (the target only gets fuller and
narrower, so pods with the same constraints will never fit it again): the solver then drops
the target from that constraint class's candidates for good, which is what makes identical
pods cheap to place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import le

from models import labels as L
from models.instancetype import InstanceType
from models.requirements import Requirement, Requirements
from scheduling.offers import OfferIndex
from scheduling.pods import Pod
from scheduling.problem import NodeInfo
from scheduling.taints import Taint

Vec = list[int]

NODE = 1000  # one node under a NodePool's ``nodes`` limit, in the milli-units limits are kept in


@dataclass(frozen=True, slots=True)
class Failure:
    reason: str
    monotone: bool
    # Decided by an existing node's own facts whatever the pod's size (its labels, taints,
    # host ports, and the pods on its hostname), not by pods elsewhere nor by its free room:
    # see ``scheduling.solving.rejections``.
    local: bool = False


def vec_fits(need: Vec, alloc: Vec) -> bool:
    return all(map(le, need, alloc))


def vec_add(a: Vec, b: Vec) -> Vec:
    return [x + y for x, y in zip(a, b, strict=True)]


def ports_conflict(
    used: set[tuple[str, int, str]], wanted: frozenset[tuple[str, int, str]]
) -> tuple[str, int, str] | None:
    for ip, port, proto in wanted:
        for uip, uport, uproto in used:
            if (
                port == uport
                and proto == uproto
                and (ip == uip or ip == "0.0.0.0" or uip == "0.0.0.0")
            ):
                return (ip, port, proto)
    return None


@dataclass(eq=False)
class PoolView:
    """A NodePool as the solver uses it: requirements, taints, types, overhead, limits."""

    name: str
    weight: int
    requirements: Requirements
    taints: tuple[Taint, ...]
    instance_types: list[InstanceType]
    daemon_overhead: Vec
    remaining: Vec | None  # limits minus what exists, per dimension + nodes (None = unlimited)
    min_values: dict[str, int]
    # Positions of ``remaining`` that carry a limit; the others are never read.
    limited: tuple[int, ...] = ()
    # Set once the limits first narrow a new claim: from then on each claim lists only types
    # no larger than its target (solving/limits.py).
    tight: bool = False
    # Host ports the DaemonSets that run on every new node of this pool already hold.
    daemon_ports: frozenset[tuple[str, int, str]] = frozenset()


@dataclass(eq=False)
class Target:
    """Common state of anything pods can be added to."""

    hostname: str
    requirements: Requirements
    taints: tuple[Taint, ...]
    used: Vec
    host_ports: set[tuple[str, int, str]] = field(default_factory=set)
    pods: list[Pod] = field(default_factory=list)


@dataclass(eq=False)
class ExistingTarget(Target):
    name: str = ""
    allocatable: Vec = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    nodepool: str | None = None
    in_flight: bool = False
    new_pods: list[Pod] = field(default_factory=list)
    base_used: Vec = field(default_factory=list)
    volume_limits: dict[str, int] = field(default_factory=dict)  # CSI driver → attach limit
    volumes: dict[str, set[str]] = field(default_factory=dict)  # CSI driver → volumes in use


def undefined_allowed(
    t: ExistingTarget | NodeInfo, allow_undefined: frozenset[str]
) -> frozenset[str]:
    """The label keys a pod may require that ``t`` need not carry. A Node's labels are facts:
    the kube-scheduler admits a pod only where each key it requires (In, Exists, Gt, Lt) is a
    label, well-known or not. Only an in-flight claim's labels are still partly unknown."""
    return allow_undefined if t.in_flight else frozenset()


@dataclass(eq=False)
class ClaimTarget(Target):
    pool: PoolView | None = None
    types: list[InstanceType] = field(default_factory=list)
    reserved: Vec | None = None
    index: int = 0
    cap: Vec = field(default_factory=list)  # fill no further than the target type's room
    target: InstanceType | None = None
    # The claim's own minValues once MIN_VALUES_POLICY=BestEffort lowered one of its pool's
    # (None: the pool's, as planned).
    min_values: dict[str, int] | None = None


def instance_type_compatible(
    it: InstanceType,
    reqs: Requirements,
    instance_keys: frozenset[str],
    offers: OfferIndex | None = None,
) -> bool:
    """Labels agree on shared keys, an instance-level label the type lacks is not required,
    and an available offering sits in an allowed zone and capacity type."""
    for r in reqs.values():
        if not label_compatible(it, r, instance_keys):
            return False
    if offers is not None:
        return offers.has_offering(it, reqs)
    zone = reqs.get(L.ZONE)
    ct = reqs.get(L.CAPACITY_TYPE)
    for o in it.offerings:
        if (
            o.available
            and (zone is None or zone.has(o.zone))
            and (ct is None or ct.has(o.capacity_type))
        ):
            return True
    return False


def label_compatible(it: InstanceType, r: Requirement, instance_keys: frozenset[str]) -> bool:
    """Whether the type's labels agree with one requirement: on a key it defines, some value
    in common (or both exclude values); a key only other types define must not be required.
    ``instance_type_compatible`` asks this of every requirement."""
    mine = it.requirements.get(r.key)
    if mine is None:
        return not (r.key in instance_keys and r.operator in ("In", "Exists", "Gt", "Lt"))
    if len(mine.intersection(r)) == 0:
        return r.operator in ("NotIn", "DoesNotExist") and mine.operator in (
            "NotIn",
            "DoesNotExist",
        )
    return True


def min_values_unmet(
    types: list[InstanceType], reqs: Requirements, min_values: dict[str, int]
) -> dict[str, int]:
    """The minValues keys ``types`` fall short of, each with the distinct values they do
    give (what Karpenter's BestEffort policy lowers the claim's minValues to)."""
    unmet: dict[str, int] = {}
    for key, need in min_values.items():
        values: set[str] = set()
        for it in types:
            r = it.requirements.get(key)
            if r is not None and not r.complement:
                values.update(v for v in r.values if reqs.get_or_exists(key).has(v))
        if len(values) < need:
            unmet[key] = len(values)
    return unmet


def min_values_shortfall(
    types: list[InstanceType], reqs: Requirements, min_values: dict[str, int]
) -> str | None:
    """Karpenter's strict minValues: the claim must keep this many distinct values per key."""
    for key, have in min_values_unmet(types, reqs, min_values).items():
        return (
            f"minValues {min_values[key]} for {key} not met: only {have} distinct value(s) "
            "among the instance types that fit"
        )
    return None
