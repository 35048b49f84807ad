"""A provisioning round whose NodeClaim watch lags its Node watch: a registered Node read
before its claim's providerID counts once, as the Node, never also as an in-flight claim."""

from __future__ import annotations

from typing import Any

from activities.kubernetes.object_cache import ObjectCache, WatchedObjects
from activities.kubernetes.raw import LISTED
from activities.planning.claim_nodes import ClaimNodes
from activities.planning.cluster_state import ClusterState, add_watched
from models import labels as L
from models.instancetype import InstanceType, Offering
from models.quantity import parse_quantity
from scheduling.inputs import Document, build_problem
from tests.support.manifests import nodepool_body

NODEPOOL = nodepool_body("default", requirements=[])
TYPES = [
    InstanceType.build(
        "fake-4",
        {"cpu": parse_quantity(4), "memory": parse_quantity("8Gi"), "pods": 110},
        [Offering("zone-a", "on-demand", 0.2)],
    )
]
PROVIDER_ID = "aws:///zone-a/i-0123456789abcdef0"


def claim(name: str, uid: str, provider_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": name,
            "uid": uid,
            "resourceVersion": "1",
            "labels": {L.NODEPOOL: "default"},
        },
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"},
            "requirements": [{"key": L.INSTANCE_TYPE, "operator": "In", "values": ["fake-4"]}],
        },
    }
    if provider_id:
        body["status"] = {"providerID": provider_id}
    return body


def unregistered(name: str, pool: str = "default", itype: str = "fake-4") -> dict[str, Any]:
    """A Node as the kubelet creates it from a launch's bootstrap: its pool, the
    unregistered taint, no owner, not registered yet."""
    body = node(name, None)
    body["metadata"]["labels"] = {L.NODEPOOL: pool, L.INSTANCE_TYPE: itype}
    body["spec"]["taints"] = [{"key": L.UNREGISTERED_TAINT_KEY, "effect": "NoExecute"}]
    return body


def node(name: str, owner: tuple[str, str] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "resourceVersion": "1",
        "labels": {L.NODEPOOL: "default", L.INSTANCE_TYPE: "fake-4"},
    }
    if owner is not None:
        name, uid = owner
        meta["ownerReferences"] = [
            {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": name, "uid": uid}
        ]
    return {
        "metadata": meta,
        "spec": {"providerID": PROVIDER_ID},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def synced(objects: list[dict[str, Any]]) -> ObjectCache:
    cache = ObjectCache()
    for o in objects:
        cache.observe(LISTED, o)
    cache.set_synced(True)
    return cache


def unlisted() -> list[dict[str, Any]]:
    raise AssertionError("a synced watch is never listed")


def round_nodes(nodes: list[dict[str, Any]], claims: list[dict[str, Any]]) -> dict[str, bool]:
    """Node or claim name -> in flight, as the round's problem counts them."""
    state = ClusterState()
    state.documents.append(Document(NODEPOOL, "NodePool default"))
    watched = WatchedObjects(pods=synced([]), nodes=synced(nodes), nodeclaims=synced(claims))
    add_watched(state, watched, unlisted, unlisted, unlisted)
    problem = build_problem(state.documents, TYPES).problem
    return {n.name: n.in_flight for n in problem.nodes}


def test_a_registered_node_read_before_its_claims_provider_id_counts_once() -> None:
    lagging = claim("default-abcde", "uid-1")  # the watch has not brought its providerID yet
    counted = round_nodes([node("ip-10-0-0-1", ("default-abcde", "uid-1"))], [lagging])
    assert counted == {"ip-10-0-0-1": False}


def test_the_claim_as_watched_is_left_as_it_was() -> None:
    lagging = claim("default-abcde", "uid-1")
    round_nodes([node("ip-10-0-0-1", ("default-abcde", "uid-1"))], [lagging])
    assert "status" not in lagging


def test_a_claim_that_shows_its_provider_id_counts_once_as_before() -> None:
    seen = claim("default-abcde", "uid-1", PROVIDER_ID)
    counted = round_nodes([node("ip-10-0-0-1", ("default-abcde", "uid-1"))], [seen])
    assert counted == {"ip-10-0-0-1": False}


def test_a_claim_made_again_under_the_same_name_is_not_the_owner() -> None:
    """A Node owned by an earlier claim of that name (another UID) is not the new claim's."""
    again = claim("default-abcde", "uid-2")
    counted = round_nodes([node("ip-10-0-0-1", ("default-abcde", "uid-1"))], [again])
    assert counted == {"ip-10-0-0-1": False, "default-abcde": True}


def test_a_node_no_claim_owns_leaves_the_claims_in_flight() -> None:
    counted = round_nodes([node("ip-10-0-0-1", None)], [claim("default-abcde", "uid-1")])
    assert counted == {"ip-10-0-0-1": False, "default-abcde": True}


def test_an_unregistered_node_no_claim_holds_counts_once_for_a_claim_of_its_pool() -> None:
    """Its claim's providerID is not read yet: one claim of its pool that shows none is it."""
    counted = round_nodes(
        [unregistered("ip-10-0-0-1")],
        [claim("default-abcde", "uid-1"), claim("default-fghij", "uid-2")],
    )
    assert sorted(counted.items()) == [("default-fghij", True), ("ip-10-0-0-1", False)]


def test_an_unregistered_node_is_not_paired_across_pools_or_types() -> None:
    elsewhere = unregistered("ip-10-0-0-1", pool="other")
    other_type = unregistered("ip-10-0-0-2", itype="fake-8")
    counted = round_nodes([elsewhere, other_type], [claim("default-abcde", "uid-1")])
    assert counted == {"ip-10-0-0-1": False, "ip-10-0-0-2": False, "default-abcde": True}


def test_an_unregistered_node_whose_claim_is_read_is_not_paired_again() -> None:
    seen = claim("default-abcde", "uid-1", PROVIDER_ID)
    counted = round_nodes([unregistered("ip-10-0-0-1")], [seen, claim("default-fghij", "uid-2")])
    assert counted == {"ip-10-0-0-1": False, "default-fghij": True}


def test_a_node_without_the_unregistered_taint_is_never_paired() -> None:
    """A Node someone labelled with a pool, not a launch's: the claims stay in flight."""
    static = unregistered("ip-10-0-0-1")
    static["spec"]["taints"] = []
    counted = round_nodes([static], [claim("default-abcde", "uid-1")])
    assert counted == {"ip-10-0-0-1": False, "default-abcde": True}


def test_only_karpenter_nodeclaim_owners_count() -> None:
    other = node("ip-10-0-0-1", None)
    other["metadata"]["ownerReferences"] = [
        {"apiVersion": "example.com/v1", "kind": "NodeClaim", "name": "default-abcde", "uid": "x"}
    ]
    assert ClaimNodes([other], []).node_of(claim("default-abcde", "x")) is None
