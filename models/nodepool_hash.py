"""The NodePool template hash that tells whether a NodeClaim was made from the pool as it is now.

Joinery stamps every NodeClaim it creates with the hash of its pool's template and the hash
*version* that produced it, in the annotations Karpenter uses. Drift compares the two only when
the claim's version is Joinery's own: a claim stamped by an older Joinery is re-stamped, never
treated as drifted; one stamped by Karpenter (``v3``) is re-stamped when Karpenter's own hash
of the pool (``models.karpenter_hash``) still matches it, so migrating a fleet never rolls it,
and read as drifted when it does not (``activities.status.claims``).

What is hashed, as Karpenter does: the template's labels, annotations, taints, startup taints
and node class reference (taints as sets: their order does not matter). Not hashed: the
requirements (drift checks them against the node's labels instead, so widening them drifts
nothing), ``expireAfter`` and ``terminationGracePeriod`` (they apply to running claims without
replacing them).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from models.nodepool import NodePool

HASH_ANNOTATION = "karpenter.sh/nodepool-hash"
HASH_VERSION_ANNOTATION = "karpenter.sh/nodepool-hash-version"
# Joinery's own version string: never equal to one Karpenter writes ("v1".."v3").
HASH_VERSION = "joinery-1"


def _taints(taints: list[Any]) -> list[tuple[str, str, str]]:
    return sorted({(t.key, t.value or "", t.effect) for t in taints})


def template_hash(pool: NodePool) -> str:
    """A short, stable digest of the parts of ``pool``'s template that drift a claim."""
    tmpl = pool.spec.template
    ref = tmpl.spec.node_class_ref
    doc = {
        "labels": dict(sorted(tmpl.metadata.labels.items())),
        "annotations": dict(sorted(tmpl.metadata.annotations.items())),
        "taints": _taints(tmpl.spec.taints),
        "startupTaints": _taints(tmpl.spec.startup_taints),
        "nodeClassRef": [ref.group, ref.kind, ref.name],
    }
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def hash_annotations(pool: NodePool) -> dict[str, str]:
    """The annotations a claim made from ``pool`` now carries."""
    return {HASH_ANNOTATION: template_hash(pool), HASH_VERSION_ANNOTATION: HASH_VERSION}
