"""A NodeClaim or Node for a lifecycle check: as the worker's watch last delivered it, else
read from the API server.

Every registration and initialization check read the claim and the Node with a GET: over a
250-node burst those were about 2.7 GETs per node, a fifth of the worker's requests
(docs/performance.md, session 25), for objects the worker's watches already held. Karpenter's
controllers read their informer cache the same way.

A watched copy can be a moment old. That is safe where it is used: every write built from it
carries a precondition (the claim's resourceVersion, or the ``test`` operations of the Node's
registration patch), so a stale copy costs one refused write and a fresh read, never a lost
update; and a check that finds a Node not yet ready from a stale copy is repeated at the
workflow's next poll, which the Node's own watch event brings forward.
"""

from __future__ import annotations

from activities.kubernetes import nodeclaims, nodes
from activities.kubernetes.raw import Obj
from activities.lifecycle.common import Deps


def claim(deps: Deps, name: str) -> Obj:
    """NodeClaim ``name``: watched, else a GET (``NotFound`` when it is gone)."""
    held = deps.watched.nodeclaims.get(name) if deps.watched is not None else None
    return held if held is not None else nodeclaims.get(deps.kube, name)


def node(deps: Deps, name: str) -> Obj:
    """Node ``name``: watched, else a GET (``NotFound`` when it is gone)."""
    held = deps.watched.nodes.get(name) if deps.watched is not None else None
    return held if held is not None else nodes.get(deps.kube, name)
