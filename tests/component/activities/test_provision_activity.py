"""The provisioning round's activity against the real control plane and emulated EC2: it
creates the planned NodeClaims itself, returns only their names, and a retried attempt makes
none twice (it finds the claims its earlier attempts made and plans only the rest)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from temporalio.converter import DataConverter

from activities.deps import Deps
from activities.kubernetes import custom_objects, nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.object_cache import WatchedObjects
from activities.kubernetes.raw import LISTED
from activities.kubernetes.resources import EC2NODECLASS, NODEPOOL
from activities.planning import provision
from models import labels as L
from tests.support.cloud import Cloud
from tests.support.kube_objects import (
    CLUSTER,
    M5,
    create_namespace,
    create_pod,
    ensure_nodeclass,
    ensure_nodepool,
    pod,
)
from tests.support.manifests import nodepool_body
from tests.support.waiting import eventually

PODS = 12


def _names_of(admin: Kube, pool: str) -> set[str]:
    listed, _ = nodeclaims.list_(admin, nodepool=pool)
    return {str(c["metadata"]["name"]) for c in listed}


def _unschedulable(admin: Kube, ns: str) -> int:
    listed = raw.call(admin.core.list_namespaced_pod, ns).get("items") or []
    return sum(
        1
        for p in listed
        if any(c.get("reason") == "Unschedulable" for c in p["status"].get("conditions") or [])
    )


@pytest.fixture
def key(admin: Kube) -> Iterator[str]:
    """A round key of this test's own; the claims the round made are deleted afterwards
    (the round plans for every pending pod of the shared cluster, not only this test's)."""
    made = provision.round_key("provisioner@test", uuid.uuid4().hex, "1")
    yield made
    for claim in nodeclaims.list_(admin)[0]:
        if (claim["metadata"].get("annotations") or {}).get(L.PROVISIONING_ROUND) == made:
            nodeclaims.delete(admin, claim["metadata"]["name"])


def test_a_round_creates_its_claims_once_and_returns_names(
    kube: Kube, admin: Kube, cloud: Cloud, key: str
) -> None:
    ensure_nodeclass(admin)
    pool = f"prov-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    big = {"requests": {"cpu": "1500m", "memory": "1Gi"}}
    for i in range(PODS):
        body = pod(f"web-{i}", ns, spec={"nodeSelector": {L.NODEPOOL: pool}})
        body["spec"]["containers"][0]["resources"] = big
        create_pod(admin, body)

    eventually(lambda: _unschedulable(admin, ns) == PODS, what="pods marked unschedulable")
    deps = Deps(kube=kube, cloud=cloud.provider)

    first = provision.provision(deps, frozenset(), key, attempt=1)
    mine = _names_of(admin, pool)
    assert len(mine) >= PODS // 2 and mine <= set(first.created)
    assert first.pending_pods >= PODS
    for name in mine:
        annotations = nodeclaims.get(admin, name)["metadata"]["annotations"]
        assert annotations[L.PROVISIONING_ROUND] == key
    # names and counts only: a few dozen bytes a claim, where a claim's body is a kilobyte
    payload = DataConverter.default.payload_converter.to_payloads([first])[0]
    assert payload.ByteSize() < 200 + 40 * len(first.created)

    # the activity retried (its result was lost): nothing new, the same names
    again = provision.provision(deps, frozenset(), key, attempt=2)
    assert _names_of(admin, pool) == mine
    assert sorted(again.created) == sorted(first.created)

    # an attempt that made only part of the round: the retry makes the rest, once
    lost = sorted(mine)[0]
    nodeclaims.delete(admin, lost)
    eventually(lambda: lost not in _names_of(admin, pool), what="claim gone")
    third = provision.provision(deps, frozenset(), key, attempt=3)
    now = _names_of(admin, pool)
    assert len(now) == len(mine) and lost not in now
    assert now <= set(third.created) and len(third.created) == len(first.created)
    # another round (another key) plans nothing more for pods that claims are coming for
    other = provision.provision(deps, frozenset(), key + "x", attempt=1)
    assert _names_of(admin, pool) == now
    for name in set(other.created):
        nodeclaims.delete(admin, name)


def _listed_into(admin: Kube) -> WatchedObjects:
    """The worker's watched copies as of now, as if each watch had just listed (and then
    delivered nothing more: a watch running behind)."""
    watched = WatchedObjects()
    listings = (
        (watched.pods, raw.list_all(admin.core.list_pod_for_all_namespaces)),
        (watched.nodes, raw.list_all(admin.core.list_node)),
        (watched.nodeclaims, nodeclaims.list_(admin)[0]),
    )
    for cache, items in listings:
        for item in items:
            cache.observe(LISTED, item)
        cache.set_synced(True)
    return watched


def test_the_next_round_counts_the_claims_a_round_made_before_the_watch_brings_them(
    kube: Kube, admin: Kube, cloud: Cloud, key: str
) -> None:
    ensure_nodeclass(admin)
    pool = f"prov-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    for i in range(4):
        body = pod(f"web-{i}", ns, spec={"nodeSelector": {L.NODEPOOL: pool}})
        body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1500m"}}
        create_pod(admin, body)
    eventually(lambda: _unschedulable(admin, ns) == 4, what="pods marked unschedulable")
    watched = _listed_into(admin)
    deps = Deps(kube=kube, cloud=cloud.provider, watched=watched)

    first = provision.provision(deps, frozenset(), key, attempt=1)
    mine = _names_of(admin, pool)
    assert mine and mine <= set(first.created)
    # no watch delivered them, yet the next round (another key) sees them in flight
    other = provision.provision(deps, frozenset(), key + "y", attempt=1)
    try:
        assert _names_of(admin, pool) == mine
        assert other.onto_in_flight >= 4  # this test's pods, onto the first round's claims
    finally:
        for name in set(other.created) - set(first.created):
            nodeclaims.delete(admin, name)


def test_a_pool_whose_nodeclass_is_not_ready_leaves_the_other_pools_alone(
    kube: Kube, admin: Kube, cloud: Cloud, key: str
) -> None:
    """As in Karpenter, a NodePool whose EC2NodeClass is not Ready is left out of the round
    (and said so), and its NodeClass's view of the catalog (every offering unavailable: no
    subnet matched) no longer stands for the pools listed after it."""
    suffix = uuid.uuid4().hex[:6]
    broken_class, broken_pool = f"nc-broken-{suffix}", f"a-broken-{suffix}"  # listed first
    body = {
        "metadata": {"name": broken_class},
        "spec": {
            "subnetSelectorTerms": [{"tags": {"team": "nobody"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
        },
    }
    custom_objects.create(admin, EC2NODECLASS, body)
    ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": broken_class}
    ensure_nodepool(admin, broken_pool, nodeClassRef=ref)
    ensure_nodeclass(admin)
    pool = f"prov-{suffix}"
    ensure_nodepool(admin, pool)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    for name, target in (("web-0", pool), ("web-1", pool), ("stuck-0", broken_pool)):
        made = pod(name, ns, spec={"nodeSelector": {L.NODEPOOL: target}})
        made["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1500m"}}
        create_pod(admin, made)
    eventually(lambda: _unschedulable(admin, ns) == 3, what="pods marked unschedulable")
    deps = Deps(kube=kube, cloud=cloud.provider)
    try:
        outcome = provision.provision(deps, frozenset(), key, attempt=1)
        assert _names_of(admin, pool) and not _names_of(admin, broken_pool)
        assert any(
            line.startswith(f"NodePool {broken_pool}: EC2NodeClass {broken_class} is not ready")
            and "subnetSelectorTerms matched no subnets" in line
            for line in outcome.skipped
        ), outcome.skipped
    finally:
        custom_objects.delete(admin, NODEPOOL, broken_pool)


def _zonal_class(admin: Kube, name: str, zone: str, kubelet: dict[str, Any] | None) -> None:
    """An EC2NodeClass whose only subnet is the seeded one in ``zone``."""
    spec: dict[str, Any] = {
        "subnetSelectorTerms": [{"tags": {"Name": f"{CLUSTER}-{zone}"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": CLUSTER}}],
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole",
    }
    if kubelet is not None:
        spec["kubelet"] = kubelet
    custom_objects.create(admin, EC2NODECLASS, {"metadata": {"name": name}, "spec": spec})


def _claims_of(admin: Kube, pool: str) -> list[dict[str, Any]]:
    return nodeclaims.list_(admin, nodepool=pool)[0]


def _zones_of(claim: dict[str, Any]) -> set[str]:
    for r in claim["spec"]["requirements"]:
        if r["key"] == L.ZONE:
            return set(r["values"])
    return set()


def test_each_pool_plans_on_its_own_nodeclass_zones_and_max_pods(
    kube: Kube, admin: Kube, cloud: Cloud, key: str
) -> None:
    """Two NodePools whose EC2NodeClasses have subnets in different zones and different
    kubelet maxPods: a pod that needs one zone goes to the pool whose NodeClass has a
    subnet there (though the other pool weighs more), and each pool's claims hold as
    many pods as its own NodeClass's maxPods allows."""
    subnets = cloud.clients.ec2.describe_subnets()["Subnets"]
    zones = sorted({s["AvailabilityZone"] for s in subnets})
    zone_a, zone_b = zones[0], zones[1]
    suffix = uuid.uuid4().hex[:6]
    class_a, class_b = f"nc-a-{suffix}", f"nc-b-{suffix}"
    pool_a, pool_b = f"zonal-a-{suffix}", f"zonal-b-{suffix}"
    _zonal_class(admin, class_a, zone_a, {"maxPods": 3})
    _zonal_class(admin, class_b, zone_b, None)
    for pool, ref, weight in ((pool_a, class_a, 50), (pool_b, class_b, None)):
        # the label "team" is only on these two pools
        body = nodepool_body(pool, node_class=ref, requirements=M5, labels={"team": suffix})
        if weight is not None:
            body["spec"]["weight"] = weight
        custom_objects.create(admin, NODEPOOL, body)
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    made = [pod("needs-b", ns, spec={"nodeSelector": {L.ZONE: zone_b, "team": suffix}})]
    made += [pod(f"a-{i}", ns, spec={"nodeSelector": {L.NODEPOOL: pool_a}}) for i in range(4)]
    made += [pod(f"b-{i}", ns, spec={"nodeSelector": {L.NODEPOOL: pool_b}}) for i in range(4)]
    for body in made:
        create_pod(admin, body)
    eventually(lambda: _unschedulable(admin, ns) == len(made), what="pods marked unschedulable")
    deps = Deps(kube=kube, cloud=cloud.provider)
    try:
        outcome = provision.provision(deps, frozenset(), key, attempt=1)
        on_a, on_b = _claims_of(admin, pool_a), _claims_of(admin, pool_b)
        assert on_a and on_b, outcome
        assert all(_zones_of(c) == {zone_a} for c in on_a)
        assert all(_zones_of(c) == {zone_b} for c in on_b)
        # maxPods 3 on pool a's NodeClass: four pods need two claims, none holding more
        assert len(on_a) == 2
        assert all(int(c["spec"]["resources"]["requests"]["pods"]) <= 3 for c in on_a)
        # pool b's NodeClass keeps the types' own pod capacity: one claim for five pods
        assert len(on_b) == 1
        assert int(on_b[0]["spec"]["resources"]["requests"]["pods"]) >= 5
    finally:
        for pool in (pool_a, pool_b):
            custom_objects.delete(admin, NODEPOOL, pool)
        for ref in (class_a, class_b):
            custom_objects.delete(admin, EC2NODECLASS, ref)
