"""Writing each NodeClaim's ``Consolidatable`` and ``Drifted`` conditions after a round.

The round already knows both (``scheduling.disruption.claim_conditions``); this is the I/O.
A claim is written only when one of its two conditions appears, disappears or changes status
or reason, so a quiet cluster costs no writes per round. ``lastTransitionTime`` moves only
when the status changes (``conditions.merge``), as Kubernetes conventions ask. Each write
re-reads the claim and carries its resourceVersion; a claim gone meanwhile is skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from activities.deps import Deps
from activities.kubernetes import conditions as cond
from activities.kubernetes import custom_objects, nodeclaims
from activities.kubernetes.errors import NotFound
from activities.kubernetes.resources import NODECLAIM
from activities.kubernetes.retries import retry_conflicts
from scheduling.disruption.claim_conditions import Wanted, desired
from scheduling.disruption.cluster import ClusterView
from scheduling.inputs import Document


def _same(existing: Mapping[str, Any] | None, wanted: Wanted | None) -> bool:
    if existing is None or wanted is None:
        return existing is None and wanted is None
    return existing.get("status") == wanted.status and existing.get("reason") == wanted.reason


def changes(
    conditions: Sequence[Mapping[str, Any]], wanted: Mapping[str, Wanted | None]
) -> dict[str, Wanted | None]:
    """The condition types whose presence, status or reason differ from ``wanted``."""
    return {type_: w for type_, w in wanted.items() if not _same(cond.find(conditions, type_), w)}


def applied(
    conditions: Sequence[Mapping[str, Any]],
    todo: Mapping[str, Wanted | None],
    *,
    generation: int | None,
    at: str | None = None,
) -> list[dict[str, Any]]:
    """``conditions`` with ``todo`` applied: removals dropped, the rest merged."""
    removed = {type_ for type_, w in todo.items() if w is None}
    kept = [dict(c) for c in conditions if c.get("type") not in removed]
    updates = [
        cond.Condition(w.type, "True" if w.status == "True" else "False", w.reason, w.message)
        for w in todo.values()
        if w is not None
    ]
    return cond.merge(kept, updates, observed_generation=generation, at=at)


def sync(
    deps: Deps,
    cluster: ClusterView,
    documents: Sequence[Document],
    now: datetime,
) -> int:
    """Bring every managed claim's two conditions to what the round says (drift against each
    node's own pool's catalog, ``cluster.types_of``); returns how many claims were written."""
    wanted = desired(cluster, now)
    read: dict[str, Sequence[Mapping[str, Any]]] = {}
    for d in documents:
        if d.body.get("kind") == "NodeClaim":
            name = str((d.body.get("metadata") or {}).get("name"))
            read[name] = (d.body.get("status") or {}).get("conditions") or []
    written = 0
    for claim, conds in wanted.items():
        if claim not in read or not changes(read[claim], conds):
            continue

        def write(name: str = claim, want: Mapping[str, Wanted | None] = conds) -> bool:
            current = nodeclaims.get(deps.kube, name)
            existing = (current.get("status") or {}).get("conditions") or []
            todo = changes(existing, want)
            meta = current["metadata"]
            if not todo or meta.get("deletionTimestamp"):
                return False
            merged = applied(existing, todo, generation=meta.get("generation"))
            custom_objects.merge_patch(
                deps.kube,
                NODECLAIM,
                name,
                {"status": {"conditions": merged}},
                resource_version=meta["resourceVersion"],
                status=True,
            )
            return True

        with contextlib.suppress(NotFound):
            written += retry_conflicts(write)
    return written
