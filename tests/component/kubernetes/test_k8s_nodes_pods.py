"""Nodes, pods, eviction and volumes against the real scheduler, controllers and kwok."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from activities.kubernetes import eviction, nodes, pods, raw, volumes
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import Conflict, EvictionBlocked, Forbidden
from tests.support.kube_helpers import delete_node, kwok_node, on_fresh_read, pod
from tests.support.kube_objects import condition
from tests.support.waiting import eventually


@pytest.fixture
def make_node(admin: Kube) -> Iterator[Callable[..., dict[str, Any]]]:
    """Register kwok-run Nodes (as a booting instance's kubelet would); remove them afterwards."""
    made: list[str] = []

    def make(name: str, **kwargs: Any) -> dict[str, Any]:
        created = raw.call(admin.core.create_node, kwok_node(name, **kwargs))
        made.append(name)
        return created

    yield make
    for name in made:
        delete_node(admin.core, name)


def _ready(kube: Kube, name: str) -> dict[str, Any] | None:
    node = nodes.get(kube, name)
    ready = condition(node, "Ready")
    return node if ready and ready["status"] == "True" else None


def _running(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    current = pods.get(kube, namespace, name)
    return current if (current.get("status") or {}).get("phase") == "Running" else None


def test_pending_pod_is_unschedulable_then_binds_to_a_registering_node(
    kube: Kube, admin: Kube, namespace: str, unique: str, make_node: Callable[..., dict[str, Any]]
) -> None:
    selector = {"joinery.test/run": unique}
    raw.call(admin.core.create_namespaced_pod, namespace, pod("web-0", node_selector=selector))

    def unschedulable() -> dict[str, Any] | None:
        scheduled = condition(pods.get(kube, namespace, "web-0"), "PodScheduled")
        return scheduled if scheduled and scheduled.get("reason") == "Unschedulable" else None

    scheduled = eventually(unschedulable, what="PodScheduled=False/Unschedulable")
    assert scheduled["status"] == "False"

    name = f"node-{unique}"
    make_node(name, labels=selector, provider_id=f"aws:///us-east-1a/i-{unique}")
    eventually(lambda: _ready(kube, name), what="kwok to mark the node Ready")
    bound = eventually(lambda: _running(kube, namespace, "web-0"), timeout=60, what="pod running")
    assert bound["spec"]["nodeName"] == name
    assert [p["metadata"]["name"] for p in pods.on_node(kube, name)] == ["web-0"]

    found = nodes.by_provider_id(kube, f"aws:///us-east-1a/i-{unique}")
    assert found is not None and found["metadata"]["name"] == name
    assert nodes.by_provider_id(kube, "aws:///us-east-1a/i-missing") is None


def test_taint_cordon_and_finalizer(
    kube: Kube, unique: str, make_node: Callable[..., dict[str, Any]]
) -> None:
    name = f"node-{unique}"
    stale = make_node(name)
    eventually(lambda: _ready(kube, name), what="node Ready")
    disrupted = {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}
    tainted = on_fresh_read(lambda: nodes.add_taint(kube, nodes.get(kube, name), disrupted))
    assert disrupted in tainted["spec"]["taints"]
    assert nodes.add_taint(kube, tainted, disrupted) == tainted  # present: no write at all
    with pytest.raises(Conflict):  # a write built from an old read never clobbers taints
        nodes.add_taint(kube, stale, {"key": "example.com/other", "effect": "NoExecute"})

    cordoned = nodes.cordon(kube, name)
    assert cordoned["spec"]["unschedulable"] is True

    held = on_fresh_read(lambda: nodes.add_finalizer(kube, nodes.get(kube, name)))
    assert "karpenter.sh/termination" in held["metadata"]["finalizers"]
    nodes.delete(kube, name, uid=held["metadata"]["uid"])
    deleting = nodes.get(kube, name)
    assert deleting["metadata"]["deletionTimestamp"]
    untainted = on_fresh_read(
        lambda: nodes.remove_taint(kube, nodes.get(kube, name), "karpenter.sh/disrupted")
    )
    assert disrupted not in (untainted["spec"].get("taints") or [])
    assert on_fresh_read(lambda: nodes.remove_finalizer(kube, nodes.get(kube, name))) is None
    nodes.delete(kube, name)  # gone already: still fine


def test_eviction_blocked_by_pdb_names_it_and_leaves_the_pod(
    kube: Kube, admin: Kube, namespace: str, unique: str, make_node: Callable[..., dict[str, Any]]
) -> None:
    name = f"node-{unique}"
    make_node(name)
    eventually(lambda: _ready(kube, name), what="node Ready")
    raw.call(
        admin.core.create_namespaced_pod,
        namespace,
        pod("db-0", labels={"app": "db"}, node_name=name),
    )
    raw.call(
        admin.core.create_namespaced_pod,
        namespace,
        pod("other", labels={"app": "web"}, node_name=name),
    )
    admin.policy.create_namespaced_pod_disruption_budget(
        namespace,
        {
            "metadata": {"name": "db-pdb"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "db"}}},
        },
    )
    admin.policy.create_namespaced_pod_disruption_budget(
        namespace,
        {
            "metadata": {"name": "web-pdb"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    target = eventually(lambda: _running(kube, namespace, "db-0"), what="db-0 running")

    with pytest.raises(EvictionBlocked) as caught:
        eviction.evict(kube, target)
    assert caught.value.pdbs == [f"{namespace}/db-pdb"]
    assert caught.value.pod == f"{namespace}/db-0"
    assert caught.value.status == 429 and caught.value.retryable
    still = pods.get(kube, namespace, "db-0")
    assert still["metadata"]["uid"] == target["metadata"]["uid"]
    assert not still["metadata"].get("deletionTimestamp")


def test_eviction_with_two_matching_pdbs_names_both(
    kube: Kube, admin: Kube, namespace: str, unique: str, make_node: Callable[..., dict[str, Any]]
) -> None:
    name = f"node-{unique}"
    make_node(name)
    created = raw.call(
        admin.core.create_namespaced_pod,
        namespace,
        pod("shared-0", labels={"app": "shared", "tier": "data"}, node_name=name),
    )
    for pdb, labels in (("by-app", {"app": "shared"}), ("by-tier", {"tier": "data"})):
        admin.policy.create_namespaced_pod_disruption_budget(
            namespace,
            {
                "metadata": {"name": pdb},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
            },
        )
    with pytest.raises(EvictionBlocked) as caught:
        eviction.evict(kube, created)
    assert caught.value.pdbs == [f"{namespace}/by-app", f"{namespace}/by-tier"]
    assert not pods.get(kube, namespace, "shared-0")["metadata"].get("deletionTimestamp")


def test_deployment_pods_are_recreated_after_eviction(
    kube: Kube, admin: Kube, namespace: str, unique: str, make_node: Callable[..., dict[str, Any]]
) -> None:
    selector = {"joinery.test/run": unique}
    make_node(f"node-{unique}", labels=selector)
    apps = k8s.AppsV1Api(admin.api_client)
    template = pod("x", labels={"app": "api"}, node_selector=selector)
    apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "api"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "api"}},
                "template": {"metadata": {"labels": {"app": "api"}}, "spec": template["spec"]},
            },
        },
    )

    def running_pods() -> list[dict[str, Any]] | None:
        listed = raw.list_all(kube.core.list_namespaced_pod, namespace, label_selector="app=api")
        live = [
            p
            for p in listed
            if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
        ]
        return live if len(live) == 2 and len(listed) == 2 else None

    before = eventually(running_pods, timeout=60, what="2 running replicas")
    victim = before[0]
    assert eviction.evict(kube, victim) is True

    def replaced() -> list[dict[str, Any]] | None:
        now = running_pods()
        if now and victim["metadata"]["uid"] not in {p["metadata"]["uid"] for p in now}:
            return now
        return None

    after = eventually(replaced, timeout=60, what="the evicted replica to be replaced")
    assert {p["metadata"]["name"] for p in after} != {p["metadata"]["name"] for p in before}
    assert eviction.evict(kube, victim) is False  # already gone


def test_pod_delete_with_grace_period(
    kube: Kube, admin: Kube, namespace: str, unique: str, make_node: Callable[..., dict[str, Any]]
) -> None:
    name = f"node-{unique}"
    make_node(name)
    created = raw.call(admin.core.create_namespaced_pod, namespace, pod("job-0", node_name=name))
    assert pods.delete(
        kube, namespace, "job-0", grace_period_seconds=30, uid=created["metadata"]["uid"]
    )

    def gone() -> bool:
        return not any(p["metadata"]["name"] == "job-0" for p in pods.on_node(kube, name))

    eventually(gone, what="kwok to finish the pod's deletion")
    assert pods.delete(kube, namespace, "job-0") is False


def test_volume_attachments_by_node(kube: Kube, admin: Kube, unique: str) -> None:
    made = []
    for node in ("a", "b"):
        attachment = admin.storage.create_volume_attachment(
            {
                "metadata": {"name": f"va-{unique}-{node}"},
                "spec": {
                    "attacher": "ebs.csi.aws.com",
                    "nodeName": f"node-{unique}-{node}",
                    "source": {"persistentVolumeName": f"pv-{unique}-{node}"},
                },
            }
        )
        made.append(attachment.metadata.name)
    try:
        on_a = volumes.attachments(kube, f"node-{unique}-a")
        assert [a["metadata"]["name"] for a in on_a] == [f"va-{unique}-a"]
        assert {f"va-{unique}-a", f"va-{unique}-b"} <= {
            a["metadata"]["name"] for a in volumes.attachments(kube)
        }
    finally:
        for name in made:
            admin.storage.delete_volume_attachment(name)


def test_joinery_token_is_not_cluster_admin(kube: Kube) -> None:
    with pytest.raises(Forbidden):
        raw.call(kube.core.create_namespace, {"metadata": {"name": "not-allowed"}})
    with pytest.raises(Forbidden):
        raw.call(kube.core.list_secret_for_all_namespaces)


def test_a_raw_watch_yields_the_apis_json_as_dicts_and_ends_with_its_timeout(
    kube: Kube, unique: str, make_node: Callable[..., dict[str, Any]]
) -> None:
    """The worker's watchers read events as JSON dicts, never the client's typed models."""
    version = raw.call(kube.core.list_node, limit=1)["metadata"]["resourceVersion"]
    name = f"watched-{unique}"
    make_node(name, provider_id=f"aws:///us-east-1a/i-{unique}")
    events = raw.watch(kube.core.list_node, resource_version=version, timeout_seconds=3)
    seen: list[tuple[str, dict[str, Any]]] = []
    began = time.monotonic()
    for kind, obj in events:  # runs to the server's end of the stream
        assert type(obj) is dict
        if obj.get("metadata", {}).get("name") == name:
            seen.append((kind, obj))
    assert time.monotonic() - began < 30
    assert seen[0][0] == "ADDED"
    assert seen[0][1]["spec"]["providerID"] == f"aws:///us-east-1a/i-{unique}"
    # kwok marks it Ready within the three seconds: a MODIFIED follows, in camelCase
    assert any(kind == "MODIFIED" and "resourceVersion" in o["metadata"] for kind, o in seen)
