"""A provisioning round that reads pods, Nodes and NodeClaims from the worker's watches sees
the same documents, in the same order, as one that lists them from the API server; so does a
disruption round (which adds the PDBs and the deleting NodeClaims)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from activities.disruption import cluster_state as disruption_state
from activities.kubernetes import raw
from activities.kubernetes.client import Kube
from activities.kubernetes.object_cache import ObjectCache, WatchedObjects
from activities.kubernetes.raw import LISTED
from activities.kubernetes.resources import NODECLAIM
from activities.planning import cluster_state
from tests.support.kube_helpers import delete_node, kwok_node, pod


def _sources(kube: Kube) -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    return [
        (kube.core.list_pod_for_all_namespaces, ()),
        (kube.core.list_node, ()),
        (
            kube.custom.list_cluster_custom_object,
            (NODECLAIM.group, NODECLAIM.version, NODECLAIM.plural),
        ),
    ]


def _caches(watched: WatchedObjects) -> list[ObjectCache]:
    return [watched.pods, watched.nodes, watched.nodeclaims]


def _seen(state: cluster_state.ClusterState) -> list[tuple[str, Any]]:
    return [(d.where, d.body) for d in state.documents]


def test_the_watched_copy_reads_as_the_lists_do(
    kube: Kube, admin: Kube, namespace: str, unique: str
) -> None:
    watched = WatchedObjects()
    versions: list[str] = []
    for (method, args), cache in zip(_sources(kube), _caches(watched), strict=True):
        listing = raw.call(method, *args)
        for item in listing.get("items") or []:
            cache.observe(LISTED, item)
        cache.set_synced(True)
        versions.append(listing["metadata"]["resourceVersion"])

    # After the lists: pods made out of name order, a Node, a pod bound to it, one deleted.
    node = f"cached-{unique}"
    raw.call(admin.core.create_node, kwok_node(node))
    try:
        for name in ("web-b", "web-a", "gone"):
            raw.call(
                admin.core.create_namespaced_pod,
                namespace,
                pod(name, node_selector={"joinery.test/none": unique}),
            )
        raw.call(admin.core.create_namespaced_pod, namespace, pod("bound", node_name=node))
        raw.call(admin.core.delete_namespaced_pod, "gone", namespace, grace_period_seconds=0)

        deadline = time.monotonic() + 60
        while True:
            # the watches catch up; kwok's writes keep coming, so compare until they agree
            for i, ((method, args), cache) in enumerate(
                zip(_sources(kube), _caches(watched), strict=True)
            ):
                for kind, obj in raw.watch(
                    method, *args, resource_version=versions[i], timeout_seconds=1
                ):
                    if kind in ("ADDED", "MODIFIED", "DELETED"):
                        cache.observe(kind, obj)
                    versions[i] = str(obj.get("metadata", {}).get("resourceVersion") or "")
            listed = cluster_state.read(kube)
            from_watches = cluster_state.read(kube, watched=watched)
            round_listed = disruption_state.read_state(kube)
            round_watched = disruption_state.read_state(kube, watched=watched)
            if (
                _seen(listed) == _seen(from_watches) and _seen(round_listed) == _seen(round_watched)
            ) or time.monotonic() > deadline:
                break
        assert _seen(from_watches) == _seen(listed)
        assert _seen(round_watched) == _seen(round_listed)
        assert from_watches.pending == listed.pending
        assert from_watches.uids == listed.uids
        assert from_watches.claim_rounds == listed.claim_rounds
        mine = [w for w, _ in _seen(from_watches) if namespace in w or node in w]
        # only Unschedulable pods count as pending: the scheduler has marked them by now
        assert f"Pod {namespace}/web-a" in mine
        assert mine.index(f"Pod {namespace}/web-a") < mine.index(f"Pod {namespace}/web-b")
        assert f"Pod {namespace}/gone" not in mine
        assert f"Node {node}" in mine

        # a broken watch: the round lists again
        watched.pods.set_synced(False)
        watched.nodes.set_synced(False)
        raw.call(admin.core.create_namespaced_pod, namespace, pod("late", node_name=node))
        late = cluster_state.read(kube, watched=watched)
        assert f"Pod {namespace}/late" in [d.where for d in late.documents]
    finally:
        delete_node(admin.core, node)
