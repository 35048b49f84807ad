"""Drift facts from the EC2NodeClass: the AWS provider's reasons a claim no longer matches it.

Karpenter's AWS provider marks a NodeClaim Drifted when, in this order:

- ``NodeClassDrift``: the class's static fields changed since launch
  (``models.ec2nodeclass_hash``; compared only when the claim's hash version is Joinery's,
  so a hash Karpenter wrote is never read as drift);
- ``AMIDrift``: the claim's ``status.imageID`` is not the AMI its instance type maps to under
  the class's ``status.amis`` now. An instance type maps to the *first* entry of
  ``status.amis`` whose requirements it is compatible with (the list is ordered newest
  non-deprecated first, by Joinery's resolver as by Karpenter's), so a newer EKS-optimized
  AMI, or new ``amiSelectorTerms``, rolls every node onto it;
- ``SecurityGroupDrift``: the instance's security groups are not exactly the class's
  ``status.securityGroups``;
- ``SubnetDrift``: the instance's subnet is not among the class's ``status.subnets``;
- ``CapacityReservationDrift``: a reserved claim's reservation
  (``karpenter.k8s.aws/capacity-reservation-id``) is not among the class's
  ``status.capacityReservations`` any more (it left the selector, or ended). Karpenter checks
  this against the instance rather than the offerings, because a reserved instance whose
  reservation ended falls back to on-demand (its labels flip) and must not drift for that.
- ``PlacementGroupDrift``: the claim's ``karpenter.k8s.aws/placement-group-id`` label is not
  the group the class's ``placementGroupSelector`` resolves to now (Joinery publishes that id
  on the class as the ``joinery.dev/placement-group-id`` annotation, "" for none): a selector
  added, removed or changed, or a group deleted and made again under the same name (a new id).
  A class without the annotation (not yet resolved by this Joinery) gives no verdict.

Karpenter answers "no verdict" (an error, so no drift) when a fact is missing; so does
Joinery: no ``imageID`` on the claim, no ``status.amis``, an unknown instance type, an empty
status list, or a claim without the subnet / security-group annotations Joinery writes at
launch (``models.labels``; Karpenter reads the instance from EC2 instead; a claim it
launched, or one an older Joinery launched, gets them from the garbage collector's next pass,
``activities.status.claim_placement``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from models import labels as L
from models.ec2nodeclass import EC2NodeClass
from models.ec2nodeclass_hash import (
    HASH_ANNOTATION,
    HASH_VERSION,
    HASH_VERSION_ANNOTATION,
    nodeclass_hash,
)
from models.instancetype import InstanceType
from models.requirements import Requirements
from scheduling.inputs import Document, InputError

KIND = "EC2NodeClass"
# Ids named in a reason before "and N more".
SHOWN = 3


@dataclass(frozen=True)
class NodeClassFacts:
    """What drift needs of one EC2NodeClass: its resolved status and its spec's hash."""

    name: str
    amis: tuple[tuple[str, Requirements], ...]  # status.amis, in order: (id, requirements)
    subnet_ids: frozenset[str]
    security_group_ids: frozenset[str]
    spec_hash: str | None  # None when the spec is not a valid EC2NodeClass spec
    capacity_reservation_ids: frozenset[str] = frozenset()  # status.capacityReservations
    # the resolved placement group's id ("" none), None when not published
    placement_group_id: str | None = None


def _entries(status: Mapping[str, Any], key: str, d: Document) -> list[Mapping[str, Any]]:
    raw = status.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(f"{d.label()}: status.{key}: expected a list")
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
            raise InputError(f"{d.label()}: status.{key}[{i}].id: expected an id")
    return raw


def _requirements(entry: Mapping[str, Any], where: str) -> Requirements:
    raw = entry.get("requirements") or []
    if not isinstance(raw, list) or not all(isinstance(r, Mapping) for r in raw):
        raise InputError(f"{where}: expected a list of node selector requirements")
    try:
        return Requirements.from_selector_terms(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{where}: {exc}") from None


def _spec_hash(body: Mapping[str, Any]) -> str | None:
    try:
        return nodeclass_hash(EC2NodeClass.model_validate(body))
    except ValidationError:
        return None  # the class cannot be launched from either: no static verdict


def read_nodeclass(d: Document) -> NodeClassFacts:
    """The facts of an EC2NodeClass document. A malformed status raises ``InputError``
    naming the document and field; a spec that does not validate only loses the hash."""
    meta = d.body.get("metadata") or {}
    name = str(meta.get("name") or "") if isinstance(meta, Mapping) else ""
    status = d.body.get("status") or {}
    if not isinstance(status, Mapping):
        raise InputError(f"{d.label()}: status: expected a mapping")
    amis = tuple(
        (str(a["id"]), _requirements(a, f"{d.label()}: status.amis[{i}].requirements"))
        for i, a in enumerate(_entries(status, "amis", d))
    )
    return NodeClassFacts(
        name=name,
        amis=amis,
        subnet_ids=frozenset(str(s["id"]) for s in _entries(status, "subnets", d)),
        security_group_ids=frozenset(str(g["id"]) for g in _entries(status, "securityGroups", d)),
        spec_hash=_spec_hash(d.body),
        capacity_reservation_ids=frozenset(
            str(r["id"]) for r in _entries(status, "capacityReservations", d)
        ),
        placement_group_id=_placement_group(meta, d),
    )


def _placement_group(meta: Any, d: Document) -> str | None:
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    if not isinstance(annotations, Mapping):
        return None
    found = annotations.get(L.NODECLASS_PLACEMENT_GROUP_ANNOTATION)
    if found is None:
        return None
    if not isinstance(found, str):
        key = L.NODECLASS_PLACEMENT_GROUP_ANNOTATION
        raise InputError(f"{d.label()}: metadata.annotations[{key}]: expected a string")
    return found


def mapped_ami(it: InstanceType, amis: Sequence[tuple[str, Requirements]]) -> str | None:
    """The AMI ``it`` launches with: the first of ``amis`` it is compatible with (Karpenter's
    ``MapToInstanceTypes``, and the launcher's ``pick_ami``)."""
    for ami_id, reqs in amis:
        if it.requirements.compatible(reqs) is None:
            return ami_id
    return None


def _ids(ids: frozenset[str]) -> str:
    shown = sorted(ids)[:SHOWN]
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(shown) + more


def static_drift(annotations: Mapping[str, str], nc: NodeClassFacts) -> str | None:
    stamped = annotations.get(HASH_ANNOTATION)
    if (
        stamped
        and nc.spec_hash is not None
        and annotations.get(HASH_VERSION_ANNOTATION) == HASH_VERSION
        and stamped != nc.spec_hash
    ):
        return f"NodeClassDrift: EC2NodeClass {nc.name}'s static fields changed since launch"
    return None


def ami_drift(image_id: str, it: InstanceType | None, nc: NodeClassFacts) -> str | None:
    if not image_id or not nc.amis or it is None:
        return None
    wanted = mapped_ami(it, nc.amis)
    if wanted == image_id:
        return None
    if wanted is None:
        return f"AMIDrift: no AMI of EC2NodeClass {nc.name} suits {it.name} now (has {image_id})"
    return f"AMIDrift: {image_id} -> {wanted} (EC2NodeClass {nc.name}'s AMI for {it.name})"


def security_group_drift(annotations: Mapping[str, str], nc: NodeClassFacts) -> str | None:
    have = L.split_ids(annotations.get(L.SECURITY_GROUP_IDS_ANNOTATION, ""))
    if not have or not nc.security_group_ids or have == nc.security_group_ids:
        return None
    return (
        f"SecurityGroupDrift: launched with {_ids(have)}, EC2NodeClass {nc.name} now has "
        f"{_ids(nc.security_group_ids)}"
    )


def subnet_drift(annotations: Mapping[str, str], nc: NodeClassFacts) -> str | None:
    subnet = annotations.get(L.SUBNET_ID_ANNOTATION, "")
    if not subnet or not nc.subnet_ids or subnet in nc.subnet_ids:
        return None
    return (
        f"SubnetDrift: {subnet} is not among EC2NodeClass {nc.name}'s subnets "
        f"({_ids(nc.subnet_ids)})"
    )


def capacity_reservation_drift(labels: Mapping[str, str], nc: NodeClassFacts) -> str | None:
    reservation = labels.get(L.CAPACITY_RESERVATION_ID, "")
    if labels.get(L.CAPACITY_TYPE) != L.CAPACITY_TYPE_RESERVED or not reservation:
        return None
    if reservation in nc.capacity_reservation_ids:
        return None
    return (
        f"CapacityReservationDrift: {reservation} is not among EC2NodeClass {nc.name}'s "
        "capacity reservations"
    )


def placement_group_drift(labels: Mapping[str, str], nc: NodeClassFacts) -> str | None:
    if nc.placement_group_id is None:
        return None
    have = labels.get(L.PLACEMENT_GROUP_ID, "")
    if have == nc.placement_group_id:
        return None
    now = nc.placement_group_id or "none"
    return (
        f"PlacementGroupDrift: launched into {have or 'no placement group'}, EC2NodeClass "
        f"{nc.name}'s placement group is now {now}"
    )


def nodeclass_drift_reason(
    annotations: Mapping[str, str],
    image_id: str,
    it: InstanceType | None,
    nc: NodeClassFacts,
    labels: Mapping[str, str] | None = None,
) -> str | None:
    """Why a claim (its annotations, labels and ``status.imageID``, its node's instance
    type) has drifted from its EC2NodeClass, or None; checked in Karpenter's order."""
    return (
        static_drift(annotations, nc)
        or ami_drift(image_id, it, nc)
        or security_group_drift(annotations, nc)
        or subnet_drift(annotations, nc)
        or capacity_reservation_drift(labels or {}, nc)
        or placement_group_drift(labels or {}, nc)
    )
