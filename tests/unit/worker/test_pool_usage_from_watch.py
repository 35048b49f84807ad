"""A NodePool's usage is counted from the worker's NodeClaim watch while it is synced: a
burst reports each pool every couple of seconds, and each report listed every claim of the
pool (the largest read of a 1,000-node burst)."""

from __future__ import annotations

from typing import Any

import pytest

from activities.kubernetes.object_cache import ObjectCache
from activities.kubernetes.raw import ADDED, LISTED
from activities.status import nodepools as nodepool_status
from models import labels as L


def claim(name: str, pool: str, cpu: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {L.NODEPOOL: pool}, "resourceVersion": "1"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"capacity": {"cpu": cpu, "pods": "10"}}}


def test_a_synced_watch_gives_the_pools_claims_without_a_request() -> None:
    watched = ObjectCache()
    for body in (claim("a-1", "a", "2"), claim("b-1", "b", "4"), claim("a-2", "a", "8")):
        watched.observe(LISTED, body)
    watched.set_synced(True)
    watched.observe(ADDED, claim("a-3", "a", "1", deleting=True))
    # no API client: a list request would fail
    mine = nodepool_status.claims_of(None, "a", watched)  # type: ignore[arg-type]
    assert sorted(c["metadata"]["name"] for c in mine) == ["a-1", "a-2", "a-3"]
    usage = nodepool_status.usage(mine)
    assert usage.nodes == 2 and usage.resources == {"cpu": "10", "pods": "20"}


def test_an_unsynced_watch_is_not_trusted() -> None:
    watched = ObjectCache()
    watched.observe(LISTED, claim("a-1", "a", "2"))  # listed, but the list not handed over
    with pytest.raises(AttributeError):  # so the pool's claims are asked of the API server
        nodepool_status.claims_of(None, "a", watched)  # type: ignore[arg-type]
