"""The lifecycle activities' logic against the real control plane and emulated EC2."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from kubernetes import client as k8s
from temporalio.exceptions import ApplicationError

from activities.deps import Deps
from activities.ec2.launch_types import LaunchResult
from activities.kubernetes import custom_objects, nodeclaims, nodeclasses, nodes, pods, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from activities.kubernetes.node_index import NodeIndex
from activities.kubernetes.nodeclass_store import NodeClassStore
from activities.kubernetes.object_cache import WatchedObjects
from activities.kubernetes.resources import NODECLAIM
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import (
    claims,
    drain,
    initialization,
    launch,
    registration,
    termination,
    termination_pass,
)
from activities.lifecycle.types import (
    BeginTerminationInput,
    ClaimSpec,
    DrainInput,
    FinalizeInput,
    InitializeInput,
    InitializeOutcome,
    InstanceInput,
    LaunchOutcome,
    RegisterInput,
    Registration,
    TerminationPassInput,
    TerminationProgress,
)
from activities.timestamps import iso, utc_now
from models import ec2nodeclass_hash as nodeclass_hash
from models import labels as L
from models.ec2nodeclass import EC2NodeClass
from sandbox.nodes import register as simulate_kubelet
from tests.support.cloud import Cloud
from tests.support.initialized_nodes import launched_and_registered
from tests.support.kube_objects import (
    M5,
    condition,
    create_claim,
    create_namespace,
    create_pdb,
    create_pod,
    nodeclaim,
    pod,
)
from tests.support.waiting import eventually


def test_prepare_launch_register_initialize(deps: Deps, admin: Kube, cloud: Cloud) -> None:
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts", startupTaints=[{"key": "cni", "effect": "NoSchedule"}])
    claim = claims.prepare(deps, name)
    assert (
        claim is not None and claim.nodepool == "acts" and claim.expire_after_seconds == 720 * 3600
    )
    assert "karpenter.sh/termination" in nodeclaims.get(admin, name)["metadata"]["finalizers"]

    out = launch.launch(deps, claim)
    again = launch.launch(deps, claim)  # a retried launch finds the same instance
    assert again.instance_id == out.instance_id
    owned = cloud.instances_of(name)
    assert len(owned) == 1
    stored = nodeclaims.get(admin, name)
    assert stored["status"]["providerID"] == out.provider_id
    assert stored["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "m5.large"
    # where the instance went, and the class it was launched from, for drift
    instance = cloud.provider.get(out.instance_id)
    noted = stored["metadata"]["annotations"]
    assert noted[L.SUBNET_ID_ANNOTATION] == instance.subnet_id != ""
    assert noted[L.SECURITY_GROUP_IDS_ANNOTATION] == ",".join(instance.security_group_ids) != ""
    live_class = EC2NodeClass.model_validate(nodeclasses.get(admin, "default"))
    assert noted.items() >= nodeclass_hash.hash_annotations(live_class).items()
    assert condition(stored, "Launched")["status"] == "True"  # type: ignore[index]

    assert registration.register(deps, RegisterInput(claim, out.provider_id)) is None
    simulate_kubelet(admin, stored)
    node_name = eventually(
        lambda: registration.register(deps, RegisterInput(claim, out.provider_id))
    )
    node = nodes.get(admin, node_name)
    meta = node["metadata"]
    assert meta["labels"]["karpenter.sh/registered"] == "true"
    assert meta["labels"]["karpenter.sh/nodepool"] == "acts"
    assert "karpenter.sh/termination" in meta["finalizers"]
    assert meta["ownerReferences"][0]["name"] == name
    taints = {(t["key"], t["effect"]) for t in node["spec"].get("taints", [])}
    assert ("karpenter.sh/unregistered", "NoExecute") not in taints
    assert ("cni", "NoSchedule") in taints
    assert condition(nodeclaims.get(admin, name), "Registered")["status"] == "True"  # type: ignore[index]

    first = initialization.initialize(deps, InitializeInput(claim, node_name))
    assert not first.initialized
    # the CNI "starts": the startup taint goes; kwok has made the node Ready
    # (kwok's heartbeats move the node's resourceVersion: re-read and retry, as a daemon would)
    retry_conflicts(lambda: nodes.remove_taint(admin, nodes.get(admin, node_name), "cni"))
    done = eventually(
        lambda: initialization.initialize(deps, InitializeInput(claim, node_name)).initialized
    )
    assert done
    assert nodes.get(admin, node_name)["metadata"]["labels"]["karpenter.sh/initialized"] == "true"
    final = nodeclaims.get(admin, name)
    assert condition(final, "Ready")["status"] == "True"  # type: ignore[index]


def _new_claim(deps: Deps, admin: Kube) -> tuple[str, ClaimSpec]:
    """A fresh claim of the ``acts`` pool, prepared for launch."""
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    return name, claim


def _api_calls(deps: Deps, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The HTTP methods of the API calls ``deps.kube`` makes from now on, in order."""
    calls: list[str] = []
    call_api = deps.kube.api_client.call_api

    def counted(path: str, method: str, *args: object, **kwargs: object) -> object:
        calls.append(method)
        return call_api(path, method, *args, **kwargs)

    monkeypatch.setattr(deps.kube.api_client, "call_api", counted)
    return calls


def test_a_launch_is_recorded_in_two_writes_and_survives_a_race(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, claim = _new_claim(deps, admin)
    result = LaunchResult(
        instance_id="i-0123456789abcdef0",
        provider_id="aws:///us-east-1a/i-0123456789abcdef0",
        instance_type="m5.large",
        zone="us-east-1a",
        capacity_type="on-demand",
        image_id="ami-0123",
        capacity={"cpu": "2"},
        allocatable={"cpu": "1930m"},
        labels={"node.kubernetes.io/instance-type": "m5.large"},
    )
    calls = _api_calls(deps, monkeypatch)
    launch.record(deps, claim, result)
    assert calls == ["PATCH", "PATCH"]  # the labels, then status and Launched together
    stored = nodeclaims.get(admin, name)
    assert stored["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "m5.large"
    assert stored["status"]["providerID"] == result.provider_id
    launched, ready = condition(stored, "Launched"), condition(stored, "Ready")
    assert launched is not None and launched["status"] == "True"
    assert ready is not None and ready["status"] == "Unknown"  # not registered yet

    # another writer moves the claim between the two writes: the status write re-reads
    other = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, other, "acts")
    other_claim = claims.prepare(deps, other)
    assert other_claim is not None
    real = nodeclaims.patch_metadata

    def then_someone_else(kube: Kube, claim_name: str, **kw: object) -> object:
        answer = real(kube, claim_name, **kw)  # type: ignore[arg-type]
        real(admin, claim_name, annotations={"example.com/touched": "yes"})
        return answer

    monkeypatch.setattr(nodeclaims, "patch_metadata", then_someone_else)
    calls.clear()
    launch.record(deps, other_claim, result)
    assert calls == ["PATCH", "PATCH", "GET", "PATCH"]  # lost once, read, won
    stored = nodeclaims.get(admin, other)
    assert stored["status"]["providerID"] == result.provider_id
    assert condition(stored, "Launched")["status"] == "True"  # type: ignore[index]


def test_a_launch_records_its_subnet_groups_and_nodeclass_hash_in_the_labels_write(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, claim = _new_claim(deps, admin)
    result = LaunchResult(
        instance_id="i-0123456789abcdef1",
        provider_id="aws:///us-east-1a/i-0123456789abcdef1",
        instance_type="m5.large",
        zone="us-east-1a",
        capacity_type="on-demand",
        image_id="ami-0123",
        labels={"node.kubernetes.io/instance-type": "m5.large"},
        subnet_id="subnet-0a",
        security_group_ids=["sg-0b", "sg-0a"],
    )
    nodeclass = EC2NodeClass.model_validate(nodeclasses.get(admin, "default"))
    calls = _api_calls(deps, monkeypatch)
    launch.record(deps, claim, result, nodeclass)
    assert calls == ["PATCH", "PATCH"]  # no write more than before: they ride the labels'
    noted = nodeclaims.get(admin, name)["metadata"]["annotations"]
    assert noted[L.SUBNET_ID_ANNOTATION] == "subnet-0a"
    assert noted[L.SECURITY_GROUP_IDS_ANNOTATION] == "sg-0a,sg-0b"
    assert noted[nodeclass_hash.HASH_ANNOTATION] == nodeclass_hash.nodeclass_hash(nodeclass)
    assert noted[nodeclass_hash.HASH_VERSION_ANNOTATION] == nodeclass_hash.HASH_VERSION


def test_insufficient_capacity_is_final(deps: Deps, admin: Kube, cloud: Cloud) -> None:
    # its own provider: the refused offerings stay in this one's cache only
    deps = Deps(kube=deps.kube, cloud=cloud.fresh_provider())
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    for it in ("m5.large", "m5.xlarge"):
        for zone in (
            "us-east-1a",
            "us-east-1b",
            "us-east-1c",
            "us-east-1d",
            "us-east-1e",
            "us-east-1f",
        ):
            cloud.emulation.inject_insufficient_capacity("on-demand", it, zone)
    try:
        with pytest.raises(ApplicationError) as err:
            launch.launch(deps, claim)
    finally:
        cloud.emulation.clear_insufficient_capacity()
    assert err.value.type == "InsufficientCapacity" and err.value.non_retryable
    assert condition(nodeclaims.get(admin, name), "Launched")["reason"] == "InsufficientCapacity"  # type: ignore[index]
    # as the workflow does after insufficient capacity: the claim goes at once
    termination.begin(deps, BeginTerminationInput(name, claim.uid, "InsufficientCapacity"))
    assert termination.terminate_instance(deps, InstanceInput(name, None))
    assert termination.finalize(deps, FinalizeInput(name, None, "InsufficientCapacity"))
    eventually(lambda: _claim_gone(admin, name), what="claim deleted")


def test_spot_refused_for_want_of_the_service_linked_role_says_so(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    """An account that never used Spot: the claim's Launched condition and a Warning event
    on its NodePool name the cause and the fix; the launch is final (re-planned), and spot is
    unavailable to the next plan (the provider's cache)."""
    provider = cloud.fresh_provider()
    deps = Deps(kube=deps.kube, cloud=provider)
    name = f"acts-{uuid.uuid4().hex[:6]}"
    spot = [*M5[:2], {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]
    create_claim(admin, name, "acts", requirements=spot)
    claim = claims.prepare(deps, name)
    assert claim is not None
    cloud.emulation.refuse_fleets("spot", "AuthFailure.ServiceLinkedRoleCreationNotPermitted")
    try:
        with pytest.raises(ApplicationError) as err:
            launch.launch(deps, claim)
    finally:
        cloud.emulation.refusals.clear()
    assert err.value.type == "InsufficientCapacity" and err.value.non_retryable
    launched = condition(nodeclaims.get(admin, name), "Launched")
    assert launched is not None and launched["reason"] == "SpotSLRCreationFailed"
    events = raw.call(
        admin.core.list_namespaced_event,
        "default",
        field_selector="involvedObject.name=acts,reason=SpotSLRCreationFailed",
    )
    [event] = events.get("items") or []
    assert event["type"] == "Warning" and "create-service-linked-role" in event["message"]
    assert provider.unavailable.is_unavailable("spot", "m5.large", "us-east-1a")
    termination.begin(deps, BeginTerminationInput(name, claim.uid, "InsufficientCapacity"))
    assert termination.terminate_instance(deps, InstanceInput(name, None))
    assert termination.finalize(deps, FinalizeInput(name, None, "InsufficientCapacity"))


def test_drain_order_pdb_and_do_not_disrupt(deps: Deps, admin: Kube, cloud: Cloud) -> None:
    name, node, out = launched_and_registered(deps, admin, "acts")
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    eventually(
        lambda: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in nodes.get(admin, node)["status"].get("conditions", [])
        ),
        what="node Ready",
    )
    retry_conflicts(
        lambda: nodes.remove_taint(admin, nodes.get(admin, node), "karpenter.sh/unregistered")
    )
    create_pod(admin, pod("web-0", ns, node=node))
    ds_pod = _daemonset_pod(admin, ns, node)
    create_pod(
        admin,
        pod(
            "keep-0",
            ns,
            node=node,
            metadata={
                "annotations": {"karpenter.sh/do-not-disrupt": "true"},
                "labels": {"app": "keep"},
            },
            spec={"terminationGracePeriodSeconds": 10},
        ),
    )
    create_pod(
        admin,
        pod(
            "tolerant-0",
            ns,
            node=node,
            metadata={"labels": {"app": "tol"}},
            spec={"tolerations": [{"key": "karpenter.sh/disrupted", "operator": "Exists"}]},
        ),
    )
    create_pdb(admin, ns, "web-pdb")

    start = termination.begin(
        deps, BeginTerminationInput(name, "", "Expired", "test", out.provider_id)
    )
    assert start.node_name == node and start.grace_deadline is None
    taints = {(t["key"], t["effect"]) for t in nodes.get(admin, node)["spec"]["taints"]}
    assert ("karpenter.sh/disrupted", "NoSchedule") in taints
    assert nodeclaims.get(admin, name)["metadata"]["deletionTimestamp"]

    status = drain.drain_pass(deps, DrainInput(name, node))
    assert [b.pod for b in status.blocked] == [f"{ns}/web-0"]
    assert status.blocked[0].pdbs == [f"{ns}/web-pdb"]
    assert status.waiting == [ds_pod]  # the DaemonSet group waits for the first group
    assert status.held == [f"{ns}/keep-0"]
    assert condition(nodeclaims.get(admin, name), "Drained")["reason"] == "PDBViolation"  # type: ignore[index]

    raw.call(admin.policy.delete_namespaced_pod_disruption_budget, "web-pdb", ns)
    eventually(
        lambda: (
            f"{ns}/web-0" in drain.drain_pass(deps, DrainInput(name, node)).evicted
            or _gone(admin, ns, "web-0")
        ),
        what="web-0 evicted",
    )
    eventually(lambda: _gone(admin, ns, "web-0"), what="web-0 gone")
    second = drain.drain_pass(deps, DrainInput(name, node))
    assert ds_pod in second.evicted and second.held == [f"{ns}/keep-0"]
    eventually(lambda: _gone(admin, ns, ds_pod.split("/")[1]), what="ds-0 gone")

    # 2 s before the node's deadline a pod with a 10 s grace period must go (do-not-disrupt too)
    deadline = iso(utc_now() + timedelta(seconds=2))
    last = drain.drain_pass(deps, DrainInput(name, node, deadline))
    assert last.deleted == [f"{ns}/keep-0"]
    eventually(
        lambda: drain.drain_pass(deps, DrainInput(name, node, deadline)).done, what="drained"
    )
    assert pods.get(admin, ns, "tolerant-0")  # tolerating pods are left alone

    assert not termination.terminate_instance(deps, InstanceInput(name, out.provider_id))
    assert eventually(
        lambda: termination.terminate_instance(deps, InstanceInput(name, out.provider_id))
    )
    assert termination.finalize(deps, FinalizeInput(name, node, "Expired"))
    eventually(lambda: _claim_gone(admin, name), what="claim deleted")
    eventually(lambda: _node_gone(admin, node), what="node deleted")


def test_a_node_that_is_gone_has_nothing_to_drain(deps: Deps, admin: Kube) -> None:
    """A lost workflow task that already finalized a dead node runs its drain again: the pods
    still bound to the deleted Node's name are left to the pod garbage collector, not evicted
    against a PodDisruptionBudget that would block forever."""
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    assert claims.prepare(deps, name) is not None
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pdb(admin, ns, "hold")
    create_pod(admin, pod("held", ns, node=f"{name}-deleted"))

    status = drain.drain_pass(deps, DrainInput(name, f"{name}-deleted"))
    assert status.done and (status.evicted, status.blocked, status.waiting) == ([], [], [])
    assert pods.get(admin, ns, "held")["metadata"].get("deletionTimestamp") is None
    assert condition(nodeclaims.get(admin, name), "Drained")["status"] == "True"  # type: ignore[index]


def test_terminate_finds_an_unrecorded_instance_by_tag(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    deps.provider().launch(launch.request_for(claim), launch._nodeclass(deps, claim.nodeclass))
    assert not termination.terminate_instance(deps, InstanceInput(name, None))
    assert termination.terminate_instance(deps, InstanceInput(name, None))
    assert cloud.instances_of(name) == []
    termination.begin(deps, BeginTerminationInput(name, claim.uid, "Deleted"))
    assert termination.finalize(deps, FinalizeInput(name, None))
    eventually(lambda: _claim_gone(admin, name), what="claim deleted")


def _daemonset_pod(admin: Kube, ns: str, node: str) -> str:
    """A real DaemonSet pinned to ``node``; returns its pod as ``namespace/name``."""
    body = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": ns},
        "spec": {
            "selector": {"matchLabels": {"app": "ds"}},
            "template": {
                "metadata": {"labels": {"app": "ds"}},
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": node},
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "agent", "image": "registry.k8s.io/pause:3.10"}],
                },
            },
        },
    }
    raw.call(k8s.AppsV1Api(admin.api_client).create_namespaced_daemon_set, ns, body)

    def running() -> str | None:
        for p in pods.on_node(admin, node):
            if p["metadata"]["namespace"] == ns and pods.is_daemonset_pod(p):
                return f"{ns}/{p['metadata']['name']}"
        return None

    return eventually(running, what="daemonset pod")


def _gone(admin: Kube, ns: str, name: str) -> bool:
    try:
        pods.get(admin, ns, name)
    except NotFound:
        return True
    return False


def _claim_gone(admin: Kube, name: str) -> bool:
    try:
        nodeclaims.get(admin, name)
    except NotFound:
        return True
    return False


def _node_gone(admin: Kube, name: str) -> bool:
    try:
        nodes.get(admin, name)
    except NotFound:
        return True
    return False


def test_registration_reads_the_node_the_watcher_named(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    out = launch.launch(deps, claim)
    simulate_kubelet(admin, nodeclaims.get(admin, name))
    node_name = eventually(
        lambda: registration.register(deps, RegisterInput(claim, out.provider_id))
    )
    listed: list[str] = []
    real_list = nodes.by_provider_id

    def counting(*args: object, **kwargs: object) -> object:
        listed.append(str(args[1]))
        return real_list(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(nodes, "by_provider_id", counting)
    # named by the watcher: one read, no list of the pool's Nodes
    hinted = RegisterInput(claim, out.provider_id, node_name)
    assert registration.register(deps, hinted) == node_name
    assert listed == []
    # a name that is not this claim's Node (or no Node at all): the list finds the right one
    for wrong in ("no-such-node", f"other-{uuid.uuid4().hex[:6]}"):
        assert registration.register(deps, RegisterInput(claim, out.provider_id, wrong)) == (
            node_name
        )
    assert len(listed) == 2
    # the workflow's first check names no Node and asks for no list: nothing is read
    first = RegisterInput(claim, out.provider_id, "", search=False)
    assert registration.register(deps, first) is None and len(listed) == 2


def _counting(monkeypatch: pytest.MonkeyPatch, kube: Kube) -> list[str]:
    """Every request ``kube`` sends, as ``METHOD path``."""
    calls: list[str] = []
    call_api = kube.api_client.call_api

    def counted(path: str, method: str, *args: object, **kwargs: object) -> object:
        params = args[0] if args else kwargs.get("path_params")
        filled = path
        for key, value in dict(params or {}).items():  # type: ignore[call-overload]
            filled = filled.replace("{" + str(key) + "}", str(value))
        calls.append(f"{method} {filled}")
        return call_api(path, method, *args, **kwargs)

    monkeypatch.setattr(kube.api_client, "call_api", counted)
    return calls


def test_a_synced_node_index_spares_the_registration_check_its_list(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    out = launch.launch(deps, claim)
    index = NodeIndex()
    index.set_synced(True)
    indexed = dataclasses.replace(deps, node_index=index)
    calls = _counting(monkeypatch, deps.kube)
    searching = RegisterInput(claim, out.provider_id, "", search=True)
    node_list = "GET /api/v1/nodes"
    # no Node carries the providerID yet, and the watch says so: nothing is read
    assert registration.register(indexed, searching) is None
    assert calls == []
    # an entry the watch left stale (that Node is gone): one read of it, then the list
    index.observe("ADDED", {"metadata": {"name": "gone"}, "spec": {"providerID": out.provider_id}})
    assert registration.register(indexed, searching) is None
    assert calls[0] == "GET /api/v1/nodes/gone" and node_list in calls
    # the Node joins and the watch delivers it: one read of that Node, no list
    node_name = simulate_kubelet(admin, nodeclaims.get(admin, name))["metadata"]["name"]
    index.observe("ADDED", nodes.get(admin, node_name))
    calls.clear()
    assert registration.register(indexed, searching) == node_name
    assert calls[0] == f"GET /api/v1/nodes/{node_name}" and node_list not in calls
    # a broken watch: the index is not trusted, the check lists as before
    index.set_synced(False)
    calls.clear()
    assert registration.register(indexed, searching) == node_name
    assert node_list in calls


def test_launches_read_their_nodeclass_from_the_store(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [100.0]
    store = NodeClassStore(deps.kube, ttl_seconds=10.0, clock=lambda: clock[0])
    cached = Deps(kube=deps.kube, cloud=deps.cloud, nodeclass_store=store)
    specs = []
    for _ in range(3):
        name = f"acts-{uuid.uuid4().hex[:6]}"
        create_claim(admin, name, "acts")
        claim = claims.prepare(deps, name)
        assert claim is not None
        specs.append(claim)
    calls = _counting(monkeypatch, deps.kube)
    with ThreadPoolExecutor(3) as pool:
        outs = list(pool.map(lambda c: launch.launch(cached, c), specs))
    assert len({o.instance_id for o in outs}) == 3
    reads = [c for c in calls if c.startswith("GET") and "ec2nodeclasses" in c]
    assert len(reads) == 1  # three launches, one read of their NodeClass

    # the watcher's events keep it current: an edit is served without a read ...
    body = nodeclasses.get(admin, "default")
    edited = {**body, "metadata": {**body["metadata"], "labels": {"edited": "yes"}}}
    store.observe("MODIFIED", edited)
    assert store.get("default")["metadata"]["labels"] == {"edited": "yes"}
    # ... a deletion makes the next launch ask the API server, and so does the TTL's end
    store.observe("DELETED", body)
    store.get("default")
    clock[0] += 10.0
    store.get("default")
    reads = [c for c in calls if c.startswith("GET") and "ec2nodeclasses" in c]
    assert len(reads) == 3
    # a NodeClass that does not exist is not remembered
    for _ in range(2):
        with pytest.raises(NotFound):
            store.get("no-such-nodeclass")
    reads = [c for c in calls if c.startswith("GET") and "ec2nodeclasses" in c]
    assert len(reads) == 5


def _ready(node: dict[str, Any]) -> bool:
    """Ready, and the controller-manager has taken its not-ready taint off again."""
    status = node.get("status") or {}
    taints = {t.get("key") for t in (node.get("spec") or {}).get("taints") or []}
    return taints <= {"karpenter.sh/unregistered"} and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _launched_with_a_node(deps: Deps, admin: Kube) -> tuple[str, ClaimSpec, LaunchOutcome, str]:
    """A fresh claim of pool ``acts``, prepared and launched, its Node joined (not registered):
    (claim name, spec, launch outcome, Node name)."""
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    out = launch.launch(deps, claim)
    node_name = simulate_kubelet(admin, nodeclaims.get(admin, name))["metadata"]["name"]
    return name, claim, out, node_name


def test_a_ready_node_is_registered_and_initialized_in_two_writes(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, claim, out, node_name = _launched_with_a_node(deps, admin)
    eventually(lambda: _ready(nodes.get(admin, node_name)), what="the Node Ready, untainted")
    calls = _counting(monkeypatch, deps.kube)
    inp = RegisterInput(claim, out.provider_id, node_name)
    assert registration.register(deps, inp) == node_name
    writes = [c for c in calls if c.startswith("PATCH")]
    lost = len(writes) - 2  # a kwok heartbeat between the read and the patch: one retry
    assert len(calls) == 4 + 2 * lost, calls  # a lost race re-reads the Node, not the claim
    assert writes[-1].endswith(f"/nodeclaims/{name}/status")  # nodeName and conditions at once
    node = nodes.get(admin, node_name)
    assert node["metadata"]["labels"]["karpenter.sh/registered"] == "true"
    assert node["metadata"]["labels"]["karpenter.sh/initialized"] == "true"
    stored = nodeclaims.get(admin, name)
    assert stored["status"]["nodeName"] == node_name
    for kind in ("Registered", "Initialized", "Ready"):
        assert condition(stored, kind)["status"] == "True"  # type: ignore[index]
    # the workflow's initialization check then finds the claim initialized: one read
    calls.clear()
    assert initialization.initialize(deps, InitializeInput(claim, node_name)).initialized
    assert calls == [f"GET /apis/karpenter.sh/v1/nodeclaims/{name}"]
    # and it stays so while the Node is briefly NotReady (kwok late with a heartbeat)
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    retry_conflicts(lambda: nodes.add_taint(admin, nodes.get(admin, node_name), not_ready))
    assert initialization.initialize(deps, InitializeInput(claim, node_name)).initialized
    assert condition(nodeclaims.get(admin, name), "Initialized")["status"] == "True"  # type: ignore[index]


def test_prepare_adds_the_first_finalizer_in_one_call_and_keeps_others(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    calls = _counting(monkeypatch, deps.kube)
    spec = claims.prepare(deps, name)
    assert spec is not None and spec.name == name and spec.nodepool == "acts"
    assert calls == [f"PATCH /apis/karpenter.sh/v1/nodeclaims/{name}"]
    assert nodeclaims.get(admin, name)["metadata"]["finalizers"] == ["karpenter.sh/termination"]
    calls.clear()
    assert claims.prepare(deps, name) is not None  # again (a retried or replayed start)
    assert [c.split(" ")[0] for c in calls] == ["PATCH", "GET"]  # the test fails: read, done
    assert nodeclaims.get(admin, name)["metadata"]["finalizers"] == ["karpenter.sh/termination"]

    # another controller's finalizer came first: it stays, ours is added after it
    other = f"acts-{uuid.uuid4().hex[:6]}"
    body = nodeclaim(other, "acts")
    body["metadata"]["finalizers"] = ["example.com/keep"]
    custom_objects.create(admin, NODECLAIM, body)
    assert claims.prepare(deps, other) is not None
    assert nodeclaims.get(admin, other)["metadata"]["finalizers"] == [
        "example.com/keep",
        "karpenter.sh/termination",
    ]
    # a claim that is gone
    assert claims.prepare(deps, f"gone-{uuid.uuid4().hex[:6]}") is None


def _racing(
    monkeypatch: pytest.MonkeyPatch, deps: Deps, admin: Kube, race: Callable[[str], object]
) -> list[str]:
    """``race(node)`` runs once, between the registration's read of the Node and its patch;
    returns the registration's requests as they will be counted."""
    real_patch = deps.kube.core.patch_node
    raced: list[str] = []

    def someone_else_first(node: str, body: object, **kw: object) -> object:
        if not raced:  # another writer moves the Node between our read and our patch
            raced.append(node)
            race(node)
        return real_patch(node, body, **kw)

    monkeypatch.setattr(deps.kube.core, "patch_node", someone_else_first)
    return _counting(monkeypatch, deps.kube)


def test_registration_that_loses_a_race_on_the_node_reads_only_the_node_again(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer changes the Node's taints, which the registration's patch rewrites:
    the patch is refused, the Node read again (not the claim), the other's taint kept."""
    _, claim, out, node_name = _launched_with_a_node(deps, admin)
    theirs = {"key": "example.com/raced", "effect": "NoSchedule"}

    def taint(node: str) -> None:  # the controller-manager writes taints too: retry
        retry_conflicts(lambda: nodes.add_taint(admin, nodes.get(admin, node), theirs))

    calls = _racing(monkeypatch, deps, admin, taint)
    assert registration.register(deps, RegisterInput(claim, out.provider_id, node_name))
    methods = [c.split(" ")[0] for c in calls]
    lost = methods.count("PATCH") - 2
    assert lost >= 1
    assert methods[:3] == ["GET", "GET", "PATCH"]  # the Node, the claim, the patch that lost
    assert len(calls) == 4 + 2 * lost, calls  # each loss: the Node read again, patched again
    assert sum(1 for c in calls if c.startswith("GET") and "/nodeclaims/" in c) == 1
    node = nodes.get(admin, node_name)
    assert node["metadata"]["labels"]["karpenter.sh/registered"] == "true"
    taints = {(t["key"], t["effect"]) for t in node["spec"]["taints"]}
    assert ("example.com/raced", "NoSchedule") in taints
    assert not any(key == "karpenter.sh/unregistered" for key, _ in taints)


def test_registration_is_not_refused_by_writes_to_other_fields_of_the_node(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new Node's status, labels and annotations move often (kwok's heartbeats, the
    controller-manager's TTL annotation): a write there between the registration's read
    and its patch does not refuse the patch, whose tests guard only what it rewrites."""
    _, claim, out, node_name = _launched_with_a_node(deps, admin)

    def elsewhere(node: str) -> None:
        nodes.patch_metadata(
            admin,
            node,
            labels={"example.com/touched": "yes"},
            annotations={"example.com/also": "yes"},
        )

    calls = _racing(monkeypatch, deps, admin, elsewhere)
    assert registration.register(deps, RegisterInput(claim, out.provider_id, node_name))
    assert [c.split(" ")[0] for c in calls[:4]] == ["GET", "GET", "PATCH", "PATCH"], calls
    # A Node kwok has already made Ready is initialized in the same call: its claim's
    # status gets one more write then, never another read or Node write.
    assert all(c.startswith("PATCH /apis/karpenter.sh/v1/nodeclaims/") for c in calls[4:]), calls
    node = nodes.get(admin, node_name)
    labels = node["metadata"]["labels"]
    assert labels["karpenter.sh/registered"] == "true" and labels["example.com/touched"] == "yes"
    assert node["metadata"]["annotations"]["example.com/also"] == "yes"
    assert node["metadata"]["finalizers"] == ["karpenter.sh/termination"]
    assert [o["name"] for o in node["metadata"]["ownerReferences"]] == [claim.name]
    assert not any(t["key"] == "karpenter.sh/unregistered" for t in node["spec"].get("taints", []))


def test_registration_and_initialization_read_the_watched_claim_and_node(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the worker's watches synced, the checks read the claim and the Node from them,
    and the answers to the worker's own writes go in at once (a busy worker's watch runs
    behind): registration builds on the claim as the launch wrote it. A watched Node that
    does not look ready is read again. A stale watched claim costs one refused write and a
    fresh read."""
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    watched = WatchedObjects()
    for cache in (watched.nodes, watched.nodeclaims):
        cache.set_synced(True)
    stale = nodeclaims.get(admin, name)
    watched.nodeclaims.observe("ADDED", stale)  # the watch has not seen the launch
    cached = dataclasses.replace(deps, watched=watched)
    out = launch.launch(cached, claim)
    created = simulate_kubelet(admin, nodeclaims.get(admin, name))
    node_name = created["metadata"]["name"]
    watched.nodes.observe("ADDED", created)  # as created: not Ready yet
    eventually(lambda: _ready(nodes.get(admin, node_name)), what="the Node Ready, untainted")
    calls = _counting(monkeypatch, deps.kube)
    both = registration.register_and_initialize(
        cached, RegisterInput(claim, out.provider_id, node_name)
    )
    assert both == Registration(node_name, InitializeOutcome(True))
    assert [c.split(" ")[0] for c in calls] == ["GET", "PATCH", "PATCH"], calls
    assert calls[0] == f"GET /api/v1/nodes/{node_name}"  # the watched copy was not ready
    calls.clear()
    assert initialization.initialize(cached, InitializeInput(claim, node_name)).initialized
    assert calls == []  # what registration wrote is what the check reads
    # a watched claim older than the writes above (a watch behind): the status write built
    # on it is refused, the claim read fresh, and that one is registered already
    watched.nodes.observe("MODIFIED", nodes.get(admin, node_name))  # the Node's is current
    watched.nodeclaims.observe("MODIFIED", stale)
    calls.clear()
    assert registration.register(cached, RegisterInput(claim, out.provider_id, node_name))
    assert [c.split(" ")[0] for c in calls] == ["PATCH", "GET"], calls
    assert condition(nodeclaims.get(admin, name), "Initialized")["status"] == "True"  # type: ignore[index]


def test_registration_checks_initialization_in_the_same_call(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shape 2's combined call: nothing while no Node carries the providerID; a Node ready at
    registration is initialized with the same requests as registration alone (the claim it
    wrote says so: no further read)."""
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts")
    claim = claims.prepare(deps, name)
    assert claim is not None
    out = launch.launch(deps, claim)
    assert registration.register_and_initialize(
        deps, RegisterInput(claim, out.provider_id)
    ) == Registration(None, None)
    node_name = simulate_kubelet(admin, nodeclaims.get(admin, name))["metadata"]["name"]
    eventually(lambda: _ready(nodes.get(admin, node_name)), what="the Node Ready, untainted")
    calls = _counting(monkeypatch, deps.kube)
    both = registration.register_and_initialize(
        deps, RegisterInput(claim, out.provider_id, node_name)
    )
    assert both == Registration(node_name, InitializeOutcome(True))
    lost = len([c for c in calls if c.startswith("PATCH")]) - 2
    assert len(calls) == 4 + 2 * lost, calls
    for kind in ("Registered", "Initialized"):
        assert condition(nodeclaims.get(admin, name), kind)["status"] == "True"  # type: ignore[index]


def test_registration_reports_why_a_registered_node_is_not_initialized(
    deps: Deps, admin: Kube, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered and ``Initialized=Unknown`` with its reason go in one status write, as
    Karpenter's one status patch per reconcile; the check that follows writes nothing more
    while the reason holds."""
    name = f"acts-{uuid.uuid4().hex[:6]}"
    create_claim(admin, name, "acts", startupTaints=[{"key": "cni", "effect": "NoSchedule"}])
    claim = claims.prepare(deps, name)
    assert claim is not None
    out = launch.launch(deps, claim)
    node_name = simulate_kubelet(admin, nodeclaims.get(admin, name))["metadata"]["name"]
    eventually(
        lambda: _ready(_without(nodes.get(admin, node_name), "cni")),
        what="the Node Ready, only its startup taint left",
    )
    calls = _counting(monkeypatch, deps.kube)
    both = registration.register_and_initialize(
        deps, RegisterInput(claim, out.provider_id, node_name)
    )
    assert both.node_name == node_name
    assert both.initialize == InitializeOutcome(False, "StartupTaint cni:NoSchedule")
    stored = nodeclaims.get(admin, name)
    assert condition(stored, "Registered")["status"] == "True"  # type: ignore[index]
    initialized = condition(stored, "Initialized")
    assert initialized is not None and initialized["status"] == "Unknown"
    assert initialized["reason"] == "StartupTaint"
    assert sum(1 for c in calls if c.startswith("PATCH") and c.endswith("/status")) == 1, calls


def _without(node: dict[str, Any], taint: str) -> dict[str, Any]:
    """``node`` as if it lacked the taint ``taint`` (for ``_ready``)."""
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("key") != taint]
    return {**node, "spec": {**(node.get("spec") or {}), "taints": taints}}


def _attach(admin: Kube, node: str) -> str:
    name = f"va-{uuid.uuid4().hex[:8]}"
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {
            "attacher": "ebs.csi.aws.com",
            "nodeName": node,
            "source": {"persistentVolumeName": f"pv-{name}"},
        },
    }
    raw.call(admin.storage.create_volume_attachment, body)
    return name


def test_the_termination_pass_stops_at_each_wait_and_runs_again_from_the_start(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    """A pod behind a PodDisruptionBudget: the pass begins termination (claim deleting, Node
    tainted) and stops at the drain. Run again with the pod gone it stops at an attached
    volume; then at the instance EC2 is still terminating; then it finalizes: Node and claim
    gone. Every step it repeats is idempotent."""
    name, node, out = launched_and_registered(deps, admin, "acts")
    eventually(lambda: _ready(nodes.get(admin, node)), what="the Node Ready, untainted")
    ns = f"t-{uuid.uuid4().hex[:8]}"
    create_namespace(admin, ns)
    create_pod(admin, pod("web-0", ns, node=node))
    create_pdb(admin, ns, "web-pdb")
    inp = TerminationPassInput(
        BeginTerminationInput(name, "", "Expired", "test", out.provider_id), node
    )

    first = termination_pass.run(deps, inp)
    assert first.start.node_name == node and first.drain is not None
    assert [b.pod for b in first.drain.blocked] == [f"{ns}/web-0"]
    assert (first.volumes_attached, first.instance_gone, first.finalized) == (None, None, False)
    assert nodeclaims.get(admin, name)["metadata"]["deletionTimestamp"]
    taints = {(t["key"], t["effect"]) for t in nodes.get(admin, node)["spec"]["taints"]}
    assert ("karpenter.sh/disrupted", "NoSchedule") in taints
    assert not cloud.provider.instances.get(out.instance_id).state.startswith("shutting")

    raw.call(admin.policy.delete_namespaced_pod_disruption_budget, "web-pdb", ns)
    attachment = _attach(admin, node)
    eventually(
        lambda: termination_pass.run(deps, inp).volumes_attached == 1, what="drained, 1 volume"
    )
    raw.call(admin.storage.delete_volume_attachment, attachment)

    third = termination_pass.run(deps, inp)
    assert (third.drain and third.drain.done, third.volumes_attached) == (True, 0)
    assert third.instance_gone is False and not third.finalized  # EC2 is shutting it down

    def finalized() -> TerminationProgress | None:
        progress = termination_pass.run(deps, inp)
        return progress if progress.finalized else None

    last = eventually(finalized)
    assert last.instance_gone
    eventually(lambda: _claim_gone(admin, name), what="claim deleted")
    eventually(lambda: _node_gone(admin, node), what="node deleted")


def test_registration_copies_the_claims_annotations_to_the_node(
    deps: Deps, admin: Kube, cloud: Cloud
) -> None:
    """The claim's annotations (its NodePool template's among them) reach the Node as
    Karpenter's registration copies them, so a template ``karpenter.sh/do-not-disrupt``
    holds the node; the Node's own annotations stay."""
    name = f"acts-{uuid.uuid4().hex[:6]}"
    body = nodeclaim(name, "acts")
    body["metadata"]["annotations"] = {L.DO_NOT_DISRUPT: "true", "example.com/owner": "a"}
    custom_objects.create(admin, NODECLAIM, body)
    claim = claims.prepare(deps, name)
    assert claim is not None
    out = launch.launch(deps, claim)
    simulate_kubelet(admin, nodeclaims.get(admin, name))
    node_name = eventually(
        lambda: registration.register(deps, RegisterInput(claim, out.provider_id))
    )
    annotations = nodes.get(admin, node_name)["metadata"]["annotations"]
    assert annotations[L.DO_NOT_DISRUPT] == "true"
    assert annotations["example.com/owner"] == "a"
    assert L.SUBNET_ID_ANNOTATION in annotations  # every annotation of the claim
