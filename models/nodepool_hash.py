"""The NodePool template hash that tells whether a NodeClaim was made from the pool as it is now.

Joinery stamps every NodeClaim it creates with the hash of its pool's template and the hash
*version* that produced it, in the annotations Karpenter uses. Drift compares the two only when
the claim's version is Joinery's own: a claim stamped by an older Joinery is re-stamped, never
treated as drifted; one stamped by Karpenter (``v3``) is re-stamped when Karpenter's own hash
of the pool (``models.karpenter_hash``) still matches it, so migrating a fleet never rolls it,
and read as drifted when it does not (``activities.status.claims``).

What is hashed, as Karpenter v1 hashes ``spec.template``: the template's labels, annotations,
taints, startup taints, node class reference, ``expireAfter`` and ``terminationGracePeriod``
(taints as sets: their order does not matter; durations by their length, so ``60m`` and
``1h`` are one value; an unset ``terminationGracePeriod`` is left out). Editing the pool's
``expireAfter`` or ``terminationGracePeriod`` therefore drifts its nodes; a running claim keeps
the values it was launched with (its own spec) until it is replaced. Not hashed, as in
Karpenter (``hash:"ignore"``): the requirements (drift checks them against the node's labels
instead, so widening them drifts nothing) and everything outside the template (budgets,
``consolidateAfter``, limits, weight).

Version history: ``joinery-1`` hashed neither duration; ``joinery-2`` adds both. A claim
stamped with an older version is re-stamped by the worker rather than drifted, except that
one already ``Drifted`` keeps its old hash and stays drifted, as Karpenter's hash controller
does on its own version bumps (``activities/status/claims.py``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from models.duration import NEVER, parse_duration
from models.nodepool import NodePool

HASH_ANNOTATION = "karpenter.sh/nodepool-hash"
HASH_VERSION_ANNOTATION = "karpenter.sh/nodepool-hash-version"
# Joinery's own version string: never equal to one Karpenter writes ("v1".."v3"). Bumped
# whenever what is hashed changes, so existing claims are re-stamped instead of all drifting.
HASH_VERSION = "joinery-2"
JOINERY_VERSION_PREFIX = "joinery-"


def _taints(taints: list[Any]) -> list[tuple[str, str, str]]:
    return sorted({(t.key, t.value or "", t.effect) for t in taints})


def _duration(text: str) -> str | float:
    return text if text == NEVER else parse_duration(text)


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
        "expireAfter": _duration(tmpl.spec.expire_after),
    }
    if tmpl.spec.termination_grace_period:
        doc["terminationGracePeriod"] = _duration(tmpl.spec.termination_grace_period)
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def hash_annotations(pool: NodePool) -> dict[str, str]:
    """The annotations a claim made from ``pool`` now carries."""
    return {HASH_ANNOTATION: template_hash(pool), HASH_VERSION_ANNOTATION: HASH_VERSION}
