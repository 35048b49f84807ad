"""The AKSNodeClass hash that tells whether a NodeClaim was launched from the class as it is now.

Karpenter's Azure provider stamps every NodeClaim it launches with a hash of its
AKSNodeClass's spec (``karpenter.azure.com/aksnodeclass-hash``) and the hash version that
produced it (``...-hash-version``); a later difference is ``NodeClassDrift``. It hashes the
whole spec but ``tags`` (tags are re-applied to the VM, not a reason to replace it), with
lists as sets and zero values ignored. Joinery does the same in the same annotations, with a
version string of its own: a hash Karpenter wrote (``v1``..``v3``) is computed another way,
so it is never compared, only replaced (as for the EC2NodeClass, ``models.ec2nodeclass_hash``).

Defaults are applied before hashing (the model's), so a spec the API server defaulted hashes
as the one written without them; absent and empty values are alike.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from models.aksnodeclass import AKSNodeClass

HASH_ANNOTATION = "karpenter.azure.com/aksnodeclass-hash"
HASH_VERSION_ANNOTATION = "karpenter.azure.com/aksnodeclass-hash-version"
# Never equal to one Karpenter writes. Bump it with any change to what is hashed (a new spec
# field with a non-empty default included): a new version re-stamps claims, where the same
# version with another hash would drift the whole fleet.
HASH_VERSION = "joinery-aks-1"

# Spec fields (wire names) Karpenter Azure tags ``hash:"ignore"``.
IGNORED = frozenset({"tags"})


def _canonical(value: Any) -> Any:
    """``value`` with empty values dropped and every list as a set (Karpenter Azure hashes
    with ``SlicesAsSets`` and ``IgnoreZeroValue``)."""
    if isinstance(value, dict):
        out = {}
        for k in sorted(value):
            v = _canonical(value[k])
            if v is not None and v != {} and v != [] and v != "":
                out[k] = v
        return out
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def nodeclass_hash(nodeclass: AKSNodeClass) -> str:
    """A short, stable digest of ``nodeclass``'s spec (what drifts a claim as
    ``NodeClassDrift``)."""
    spec = {k: v for k, v in nodeclass.spec.to_wire().items() if k not in IGNORED}
    raw = json.dumps(_canonical(spec), sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def hash_annotations(nodeclass: AKSNodeClass) -> dict[str, str]:
    """The annotations a claim launched from ``nodeclass`` now carries."""
    return {HASH_ANNOTATION: nodeclass_hash(nodeclass), HASH_VERSION_ANNOTATION: HASH_VERSION}
