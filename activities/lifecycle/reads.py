"""A NodeClaim or Node for a lifecycle check: as the worker's watch last delivered it, else
read from the API server.

Every registration and initialization check read the claim and the Node with a GET: over a
250-node burst those were about 2.7 GETs per node, a fifth of the worker's requests
(docs/performance.md, session 25), for objects the worker's watches already held. Karpenter's
controllers read their informer cache the same way.

A watched copy can be a moment old (a busy worker's watch runs seconds behind). That is safe
where it is used: every write built from it carries a precondition (the claim's
resourceVersion, or the ``test`` operations of the Node's registration patch), so a stale
copy costs one refused write and a fresh read, never a lost update. Two things keep that
rare: the answers to the worker's own writes go into the cache at once (``claim_written``,
``node_written``: the launch's status write is what registration builds on next), and a
watched Node that does not look ready is read again before registration decides it is not
initialized (a stale "not ready" would cost the separate initialization writes).
"""

from __future__ import annotations

from collections.abc import Callable

from activities.deps import Deps
from activities.kubernetes import nodeclaims, nodes
from activities.kubernetes.raw import Obj


def claim(deps: Deps, name: str) -> Obj:
    """NodeClaim ``name``: watched, else a GET (``NotFound`` when it is gone)."""
    held = deps.watched.nodeclaims.get(name) if deps.watched is not None else None
    return held if held is not None else nodeclaims.get(deps.kube, name)


def node(deps: Deps, name: str, *, trust: Callable[[Obj], bool] = lambda _node: True) -> Obj:
    """Node ``name``: watched when ``trust`` accepts that copy, else a GET (``NotFound``
    when it is gone)."""
    held = deps.watched.nodes.get(name) if deps.watched is not None else None
    return held if held is not None and trust(held) else nodes.get(deps.kube, name)


def claim_written(deps: Deps, obj: Obj) -> Obj:
    """``obj``, the answer to a write of a claim, kept for the next read; returned."""
    if deps.watched is not None:
        deps.watched.nodeclaims.observe_written(obj)
    return obj


def node_written(deps: Deps, obj: Obj) -> Obj:
    """``obj``, the answer to a write of a Node, kept for the next read; returned."""
    if deps.watched is not None:
        deps.watched.nodes.observe_written(obj)
    return obj
