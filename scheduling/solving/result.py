"""What a solve returns: the plan (new claims, pods added to existing nodes, unschedulable
pods) and each planned claim."""

from __future__ import annotations

from dataclasses import dataclass

from models.instancetype import InstanceType
from models.requirements import Requirements
from models.resources import Resources
from scheduling.pods import Pod


@dataclass
class PlannedClaim:
    nodepool: str
    instance_types: list[InstanceType]
    requirements: Requirements
    zones: list[str]
    capacity_types: list[str]
    price: float
    requests: Resources
    pods: list[Pod]
    # MIN_VALUES_POLICY=BestEffort lowered one of the pool's minValues for this claim (its
    # requirements carry the lowered ones): Karpenter's nodeclaim-min-values-relaxed.
    min_values_relaxed: bool = False


@dataclass
class Plan:
    claims: list[PlannedClaim]
    existing: dict[str, list[Pod]]
    unschedulable: dict[str, str]
    scheduled: list[Pod]

    @property
    def cost(self) -> float:
        return sum(c.price for c in self.claims)
