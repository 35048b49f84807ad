"""Fields our CRDs accept (Karpenter's do) that Joinery does not act on yet.

A manifest written for Karpenter applies unchanged, so a field such as ``networkInterfaces``
or ``replicas`` is admitted by the API server; acting as if it were absent would launch nodes
the user did not ask for (no EFA, no placement group, a dynamic pool instead of a static one).
Instead the object is refused: not Ready with ``ValidationSucceeded=False`` (reason
``UnsupportedField``) and a Warning event, left out of provisioning, and named by ``joinery
plan`` on stderr. Each finding names the field's path, so the message says exactly what to
remove. Reads raw bodies (dicts as the API server returns them): no parsing needed first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The reason of the ValidationSucceeded=False condition and of its Warning event: the one
# the AKSNodeClass uses for its own unimplemented fields (models.aksnodeclass).
REASON = "UnsupportedField"


@dataclass(frozen=True)
class Unimplemented:
    """One field of one object that Joinery refuses, with why in a few words."""

    path: str  # e.g. "spec.networkInterfaces"
    why: str

    def line(self) -> str:
        return f"{self.path}: {self.why}"


_LATER = "not implemented in Joinery yet (remove it, or keep this object on Karpenter)"

# EC2NodeClass ``spec`` fields, top level: what each would have done.
NODECLASS_FIELDS: Mapping[str, str] = {
    "networkInterfaces": f"network interfaces (EFA) are {_LATER}",
}

# NodePool ``spec`` fields.
NODEPOOL_FIELDS: Mapping[str, str] = {
    "replicas": "static NodePools (Karpenter's alpha StaticCapacity feature) are not "
    "implemented in Joinery (remove replicas for a dynamic pool)",
}


def _set(value: Any) -> bool:
    """Whether a field asks for something: absent, null, empty and 0 ask for nothing
    (``ipPrefixCount: 0`` is no prefixes, which is what Joinery launches)."""
    return value not in (None, 0, "", [], {})


def _spec(body: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = body.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def nodeclass_fields(body: Mapping[str, Any]) -> list[Unimplemented]:
    """The fields of an EC2NodeClass (as read) that Joinery refuses, in CRD order."""
    spec = _spec(body)
    return [
        Unimplemented(f"spec.{name}", why)
        for name, why in NODECLASS_FIELDS.items()
        if _set(spec.get(name))
    ]


def nodepool_fields(body: Mapping[str, Any]) -> list[Unimplemented]:
    """The fields of a NodePool (as read) that Joinery refuses. ``replicas: 0`` is refused
    too: it asks for a static pool of no nodes, not for a dynamic one."""
    spec = _spec(body)
    return [
        Unimplemented(f"spec.{name}", why)
        for name, why in NODEPOOL_FIELDS.items()
        if spec.get(name) is not None
    ]


def message(found: Sequence[Unimplemented]) -> str:
    """One line naming every refused field (a condition's message)."""
    return "; ".join(f.line() for f in found)
