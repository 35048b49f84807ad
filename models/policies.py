"""Karpenter's operator-wide scheduling policies and feature gates, as one value.

Karpenter reads ``MIN_VALUES_POLICY``, ``PREFERENCE_POLICY`` and ``FEATURE_GATES`` once at
start and every controller consults them; Joinery carries them in ``Policies`` from the
worker's settings (or ``joinery plan``'s flags) down to the solver, the disruption engine
and the launch, so the same input decides the same way everywhere. Parsing is here, pure,
so the CLI and the worker refuse a bad value with the same one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# MIN_VALUES_POLICY: Strict keeps a claim only when its types still give every
# ``minValues``; BestEffort lowers a claim's minValues to what its types give instead.
STRICT, BEST_EFFORT = "Strict", "BestEffort"
MIN_VALUES_POLICIES = (STRICT, BEST_EFFORT)
# PREFERENCE_POLICY: Respect tries preferences first and relaxes them one at a time;
# Ignore plans as if pods had none (preferred node and pod (anti-)affinity, ScheduleAnyway
# topology spread).
RESPECT, IGNORE = "Respect", "Ignore"
PREFERENCE_POLICIES = (RESPECT, IGNORE)

# The NodeClaim annotation Karpenter sets on every claim its scheduler creates: "true" when
# BestEffort lowered one of the claim's minValues below its NodePool's.
MIN_VALUES_RELAXED_ANNOTATION = "karpenter.sh/nodeclaim-min-values-relaxed"

# Karpenter v1.14's gates with their defaults. Joinery acts on SpotToSpotConsolidation and
# NodeRepair; ReservedCapacity may only be on (its default: capacity reservations are used
# where a class selects them, and turning that off is not implemented); the alpha gates
# whose features Joinery lacks may be named only to keep them off.
GATE_DEFAULTS: dict[str, bool] = {
    "NodeRepair": False,
    "ReservedCapacity": True,
    "SpotToSpotConsolidation": False,
    "NodeOverlay": False,
    "StaticCapacity": False,
    "CapacityBuffer": False,
}
UNIMPLEMENTED_GATES = frozenset({"NodeOverlay", "StaticCapacity", "CapacityBuffer"})
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class PolicyError(ValueError):
    """A policy or gate value Karpenter would refuse (or one Joinery cannot honour)."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The gates Joinery acts on; every other known gate is checked and dropped."""

    spot_to_spot_consolidation: bool = False
    node_repair: bool = False


@dataclass(frozen=True, slots=True)
class Policies:
    min_values: str = STRICT
    preference: str = RESPECT
    gates: FeatureGates = field(default_factory=FeatureGates)

    @property
    def relax_min_values(self) -> bool:
        return self.min_values == BEST_EFFORT

    @property
    def ignore_preferences(self) -> bool:
        return self.preference == IGNORE


def parse_min_values_policy(raw: str) -> str:
    value = raw.strip() or STRICT
    if value not in MIN_VALUES_POLICIES:
        raise PolicyError(f"invalid MIN_VALUES_POLICY {raw!r}: expected Strict or BestEffort")
    return value


def parse_preference_policy(raw: str) -> str:
    value = raw.strip() or RESPECT
    if value not in PREFERENCE_POLICIES:
        raise PolicyError(f"invalid PREFERENCE_POLICY {raw!r}: expected Respect or Ignore")
    return value


def parse_feature_gates(raw: str) -> FeatureGates:
    """Karpenter's syntax, ``Name=bool`` pairs separated by commas (spaces around each part
    are allowed; booleans as Go's ParseBool reads them). Unlike Karpenter, an unknown name
    is refused rather than dropped: a misspelt gate would otherwise stay off unnoticed."""
    gates = dict(GATE_DEFAULTS)
    for part in raw.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise PolicyError(f"invalid FEATURE_GATES entry {part!r}: expected Name=true|false")
        if name not in GATE_DEFAULTS:
            known = ", ".join(sorted(GATE_DEFAULTS))
            raise PolicyError(f"unknown feature gate {name!r} in FEATURE_GATES (known: {known})")
        if value in _TRUE:
            on = True
        elif value in _FALSE:
            on = False
        else:
            raise PolicyError(f"invalid value {value!r} for feature gate {name}: expected a bool")
        if on and name in UNIMPLEMENTED_GATES:
            raise PolicyError(f"feature gate {name} is not implemented by Joinery: leave it off")
        if not on and name == "ReservedCapacity":
            raise PolicyError(
                "feature gate ReservedCapacity=false is not implemented by Joinery: it uses the "
                "capacity reservations an EC2NodeClass selects (leave the gate on, its default)"
            )
        gates[name] = on
    return FeatureGates(
        spot_to_spot_consolidation=gates["SpotToSpotConsolidation"],
        node_repair=gates["NodeRepair"],
    )


def parse_policies(min_values: str = "", preference: str = "", feature_gates: str = "") -> Policies:
    """All three settings at once; raises ``PolicyError`` with one line naming the setting."""
    return Policies(
        min_values=parse_min_values_policy(min_values),
        preference=parse_preference_policy(preference),
        gates=parse_feature_gates(feature_gates),
    )
