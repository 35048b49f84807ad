"""The solver's working vocabulary: how far a pod's preferences are relaxed, and a class of
pods that share every scheduling constraint."""

from __future__ import annotations

from dataclasses import dataclass, field

from models.requirements import Requirements
from models.resources import Resources
from scheduling.pods import SpreadConstraint
from scheduling.taints import Toleration
from scheduling.targets import (
    Target,
)
from scheduling.topology import TopologyGroup


@dataclass(frozen=True)
class RelaxState:
    """How far a pod's preferences have been relaxed (Karpenter's order)."""

    term: int = 0  # index of the required node-affinity term in use
    pref_affinity_dropped: int = 0
    pref_anti_dropped: int = 0
    pref_node_dropped: int = 0
    schedule_anyway_dropped: bool = False
    tolerate_prefer_no_schedule: bool = False


@dataclass(eq=False)
class PodClass:
    """Pods that share every scheduling constraint (after relaxation) and so behave alike."""

    requests: Resources
    vec: list[int]
    reqs: Requirements
    tolerations: tuple[Toleration, ...]
    own: list[tuple[TopologyGroup, SpreadConstraint | None]]
    owned_anti: list[TopologyGroup]
    inverse: list[TopologyGroup]
    matching: list[TopologyGroup]
    host_ports: frozenset[tuple[str, int, str]]
    self_selecting: dict[int, int]
    invalid: str | None = None
    eligible: dict[str, set[str]] = field(default_factory=dict)
    candidates: list[Target] = field(default_factory=list)
    cursor: int = 0
    pool_cache: dict[int, object] = field(default_factory=dict)
    # Existing nodes known to reject the class before the solve starts (NodeRejections).
    rejected_by: set[str] | None = None
    # (solver changes, reason) of the class's last failure to place a pod (``_place``).
    failed_at: tuple[int, str] | None = None
