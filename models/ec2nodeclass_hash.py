"""The EC2NodeClass hash that tells whether a NodeClaim was launched from the class as it is now.

Karpenter's AWS provider stamps every NodeClaim it launches with a hash of its EC2NodeClass's
*static* fields and the hash version that produced it; a later difference is
``NodeClassDrift``. Joinery does the same, in the same annotations, with a version string of
its own: a hash Karpenter wrote (``v6`` and earlier) is computed another way, so it is never
compared, only replaced (the worker re-stamps such claims with the current hash), and adopting
a Karpenter fleet rolls nothing.

What is hashed: the spec without the fields Karpenter leaves out of its hash because they are
resolved into something else that drift checks on its own: the selector terms for AMIs,
subnets, security groups and capacity reservations (``AMIDrift``, ``SubnetDrift``,
``SecurityGroupDrift``), and ``ipPrefixCount``. ``amiFamily`` is replaced by the family the
node boots (an alias's family, else ``amiFamily``), as Karpenter hashes the resolved family,
so writing out the family an alias already implies drifts nothing. ``kubelet`` is hashed
(Karpenter hashes its rendering). Lists are sets (their order does not matter) except inside
``kubelet``, absent and empty values are alike, and defaults are applied first, so a spec
the API server defaulted hashes as the one written without them. Karpenter also mixes the
cluster's CA bundle in; Joinery does not (a new CA bundle does not roll nodes here).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from models.ec2nodeclass import EC2NodeClass

HASH_ANNOTATION = "karpenter.k8s.aws/ec2nodeclass-hash"
HASH_VERSION_ANNOTATION = "karpenter.k8s.aws/ec2nodeclass-hash-version"
# Joinery's own version string: never equal to one Karpenter writes ("v1".."v6"). Bump it
# with any change to what is hashed, a new spec field with a non-empty default included:
# every claim's hash would change, and a new version re-stamps claims where the same version
# would drift the whole fleet.
HASH_VERSION = "joinery-1"

# Spec fields (wire names) Karpenter tags ``hash:"ignore"``.
IGNORED = frozenset(
    {
        "amiSelectorTerms",
        "subnetSelectorTerms",
        "securityGroupSelectorTerms",
        "capacityReservationSelectorTerms",
        "ipPrefixCount",
        "amiFamily",
    }
)
# Below these keys a list's order is meaningful (Karpenter hashes the kubelet block rendered).
ORDERED = frozenset({"kubelet"})


def ami_family(nodeclass: EC2NodeClass) -> str:
    """The AMI family the class's nodes boot, lower case: an alias's family, else
    ``amiFamily`` ("" when neither says)."""
    for term in nodeclass.spec.ami_selector_terms:
        if term.alias:
            return term.alias.split("@", 1)[0].lower()
    return (nodeclass.spec.ami_family or "").lower()


def _canonical(value: Any, ordered: bool = False) -> Any:
    """``value`` with empty values dropped and lists as sets (unless ``ordered``)."""
    if isinstance(value, dict):
        out = {}
        for k in sorted(value):
            v = _canonical(value[k], ordered or k in ORDERED)
            if v is not None and v != {} and v != []:
                out[k] = v
        return out
    if isinstance(value, list):
        items = [_canonical(v, ordered) for v in value]
        return items if ordered else sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def nodeclass_hash(nodeclass: EC2NodeClass) -> str:
    """A short, stable digest of ``nodeclass``'s static fields (what drifts a claim as
    ``NodeClassDrift``)."""
    spec = {k: v for k, v in nodeclass.spec.to_wire().items() if k not in IGNORED}
    doc = {"spec": _canonical(spec), "amiFamily": ami_family(nodeclass)}
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def hash_annotations(nodeclass: EC2NodeClass) -> dict[str, str]:
    """The annotations a claim launched from ``nodeclass`` now carries."""
    return {HASH_ANNOTATION: nodeclass_hash(nodeclass), HASH_VERSION_ANNOTATION: HASH_VERSION}
