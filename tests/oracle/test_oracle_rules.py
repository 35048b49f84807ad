"""The oracle on hand-written cases: for each filter rule, one placement it must admit and one
it must refuse (checked against the Kubernetes documentation's examples and the scheduler
plugins' semantics, not against Joinery)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle.checker import first_failure
from tests.oracle.cluster import Cluster
from tests.oracle.objects import ZONE, affinity, node, pod, pod_term, spread
from tests.oracle.quantities import amount
from tests.oracle.resources import pod_requests


def judge(
    objects: list[dict[str, Any]], *placements: tuple[dict[str, Any], str], final: bool = False
) -> str | None:
    return first_failure(Cluster.from_objects(objects), list(placements), final_state=final)


def refused(why: str | None, rule: str) -> None:
    assert why is not None and f": {rule}:" in why, why


def test_quantities() -> None:
    assert amount("cpu", "100m") == 100
    assert amount("cpu", "1.5") == 1500
    assert amount("cpu", "0.0001") == 1  # rounded up, like MilliValue
    assert amount("memory", "1Gi") == 2**30
    assert amount("memory", "1G") == 10**9
    assert amount("memory", "1e3") == 1000
    assert amount("memory", "128974848") == 128974848


# -- resources ----------------------------------------------------------------------------------


def test_cpu_and_memory() -> None:
    n = node("n", cpu="2", memory="4Gi")
    there = pod("a", cpu="1500m", memory="1Gi", node_name="n")
    assert judge([n, there], (pod("b", cpu="500m", memory="3Gi"), "n")) is None
    refused(judge([n, there], (pod("b", cpu="501m"), "n")), "NodeResourcesFit")
    refused(judge([n, there], (pod("b", cpu="0", memory="3073Mi"), "n")), "NodeResourcesFit")


def test_zero_request_passes_a_full_node() -> None:
    n = node("n", cpu="1")
    assert judge([n, pod("a", cpu="1", node_name="n")], (pod("b", cpu=None), "n")) is None


def test_pods_count() -> None:
    n = node("n", pods=2)
    objs = [n, pod("a", node_name="n")]
    assert judge(objs, (pod("b"), "n")) is None
    refused(judge(objs, (pod("b"), "n"), (pod("c"), "n")), "NodeResourcesFit")


def test_extended_resources() -> None:
    gpu = node("g", extra={"nvidia.com/gpu": "1"})
    plain = node("p")
    p = pod("a")
    p["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    assert judge([gpu, plain], (p, "g")) is None
    refused(judge([gpu, plain], (p, "p")), "NodeResourcesFit")
    refused(
        judge([gpu, plain], (p, "g"), ({**p, "metadata": {"name": "b"}}, "g")), "NodeResourcesFit"
    )


def test_requests_default_to_limits() -> None:
    p = pod("a", cpu=None)
    p["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "3"}}
    assert pod_requests(p, Cluster())["cpu"] == 3000
    refused(judge([node("n", cpu="2")], (p, "n")), "NodeResourcesFit")


def test_init_containers_max_rule_and_sidecars() -> None:
    p = pod("a", cpu="1")
    p["spec"]["initContainers"] = [
        {"name": "i", "resources": {"requests": {"cpu": "2500m"}}},
        {"name": "j", "resources": {"requests": {"cpu": "500m"}}},
    ]
    assert pod_requests(p, Cluster())["cpu"] == 2500
    assert judge([node("n", cpu="3")], (p, "n")) is None
    refused(judge([node("n", cpu="2")], (p, "n")), "NodeResourcesFit")
    # A sidecar (restartable init container) keeps running: it adds to the containers and to
    # every init container started after it.
    s = pod("s", cpu="1")
    s["spec"]["initContainers"] = [
        {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
        {"name": "i", "resources": {"requests": {"cpu": "2500m"}}},
    ]
    assert pod_requests(s, Cluster())["cpu"] == 3500


def test_pod_overhead_and_runtime_class() -> None:
    p = pod("a", cpu="1", overhead={"cpu": "500m"})
    refused(judge([node("n", cpu="1400m")], (p, "n")), "NodeResourcesFit")
    rc = {
        "kind": "RuntimeClass",
        "metadata": {"name": "kata"},
        "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m"}},
    }
    q = pod("b", cpu="1", runtimeClassName="kata")
    assert judge([node("n", cpu="1250m"), rc], (q, "n")) is None
    refused(judge([node("n", cpu="1249m"), rc], (q, "n")), "NodeResourcesFit")


# -- node selection ------------------------------------------------------------------------------


def test_node_selector() -> None:
    objs = [node("a", {"disk": "ssd"}), node("b", {"disk": "hdd"})]
    p = pod("p", nodeSelector={"disk": "ssd"})
    assert judge(objs, (p, "a")) is None
    refused(judge(objs, (p, "b")), "NodeAffinity")


@pytest.mark.parametrize(
    ("op", "values", "label", "ok"),
    [
        ("In", ["a", "b"], "b", True),
        ("In", ["a"], None, False),
        ("NotIn", ["a"], "b", True),
        ("NotIn", ["a"], None, True),
        ("NotIn", ["a"], "a", False),
        ("Exists", [], "x", True),
        ("Exists", [], None, False),
        ("DoesNotExist", [], None, True),
        ("DoesNotExist", [], "x", False),
        ("Gt", ["4"], "8", True),
        ("Gt", ["4"], "4", False),
        ("Gt", ["4"], "big", False),
        ("Gt", ["4"], None, False),
        ("Lt", ["4"], "3", True),
        ("Lt", ["4"], "10", False),
    ],
)
def test_node_affinity_operators(op: str, values: list[str], label: str | None, ok: bool) -> None:
    n = node("n", {"k": label} if label is not None else {})
    expr = {"key": "k", "operator": op, "values": values}
    p = pod("p", affinity=affinity([{"matchExpressions": [expr]}]))
    why = judge([n], (p, "n"))
    if ok:
        assert why is None, why
    else:
        refused(why, "NodeAffinity")


def test_node_affinity_terms_are_ored_and_empty_terms_match_nothing() -> None:
    n = node("n", {"k": "v"})
    miss = {"matchExpressions": [{"key": "k", "operator": "In", "values": ["w"]}]}
    hit = {"matchExpressions": [{"key": "k", "operator": "Exists"}]}
    assert judge([n], (pod("p", affinity=affinity([miss, hit])), "n")) is None
    refused(judge([n], (pod("p", affinity=affinity([{}])), "n")), "NodeAffinity")
    fields = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
    assert judge([n], (pod("p", affinity=affinity([fields])), "n")) is None


# -- taints -------------------------------------------------------------------------------------


def test_taints_and_tolerations() -> None:
    objs = [
        node("ns", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        node("ne", taints=[{"key": "k", "value": "v", "effect": "NoExecute"}]),
        node("pr", taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]),
    ]
    assert judge(objs, (pod("p"), "pr")) is None
    refused(judge(objs, (pod("p"), "ns")), "TaintToleration")
    refused(judge(objs, (pod("p"), "ne")), "TaintToleration")
    equal = pod("p", tolerations=[{"key": "k", "operator": "Equal", "value": "v"}])
    assert judge(objs, (equal, "ns"), (equal | {"metadata": {"name": "q"}}, "ne")) is None
    wrong = pod("p", tolerations=[{"key": "k", "value": "w"}])
    refused(judge(objs, (wrong, "ns")), "TaintToleration")
    other_effect = pod("p", tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute"}])
    refused(judge(objs, (other_effect, "ns")), "TaintToleration")
    everything = pod("p", tolerations=[{"operator": "Exists"}])
    assert judge(objs, (everything, "ns")) is None


def test_cordoned_node() -> None:
    objs = [node("n", unschedulable=True)]
    refused(judge(objs, (pod("p"), "n")), "NodeUnschedulable")
    tol = pod("p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])
    assert judge(objs, (tol, "n")) is None


# -- host ports ---------------------------------------------------------------------------------


def _with_port(
    p: dict[str, Any], port: int, ip: str | None = None, proto: str = "TCP"
) -> dict[str, Any]:
    entry: dict[str, Any] = {"containerPort": 80, "hostPort": port, "protocol": proto}
    if ip:
        entry["hostIP"] = ip
    p["spec"]["containers"][0]["ports"] = [entry]
    return p


def test_host_ports() -> None:
    objs = [node("n"), _with_port(pod("a", node_name="n"), 8080)]
    refused(judge(objs, (_with_port(pod("b"), 8080), "n")), "NodePorts")
    assert judge(objs, (_with_port(pod("b"), 8081), "n")) is None
    assert judge(objs, (_with_port(pod("b"), 8080, proto="UDP"), "n")) is None
    refused(judge(objs, (_with_port(pod("b"), 8080, ip="10.0.0.1"), "n")), "NodePorts")
    two = [node("n"), _with_port(pod("a", node_name="n"), 8080, ip="10.0.0.1")]
    assert judge(two, (_with_port(pod("b"), 8080, ip="10.0.0.2"), "n")) is None


# -- topology spread ----------------------------------------------------------------------------


def _zones(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [node(f"n{z}", {ZONE: z}) for z in "abc"] + list(extra)


APP = {"app": "web"}


def test_spread_counts_empty_eligible_domains() -> None:
    c = spread(ZONE, 1, APP)
    objs = _zones(pod("w0", labels=APP, node_name="nb"))
    assert judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[c]), "na")) is None
    # zones a and c hold 0 matching pods: a second pod in b makes skew 2.
    refused(
        judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[c]), "nb")),
        "PodTopologySpread",
    )


def test_spread_nodes_without_the_key_are_not_domains_and_are_refused() -> None:
    c = spread(ZONE, 1, APP)
    objs = [node("na", {ZONE: "a"}), node("bare"), pod("w0", labels=APP, node_name="na")]
    # Only zone a is a domain: its min is its own count, so it takes more pods.
    assert judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[c]), "na")) is None
    refused(
        judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[c]), "bare")),
        "PodTopologySpread",
    )


def test_spread_node_affinity_policy() -> None:
    c = spread(ZONE, 1, APP)
    sel: dict[str, Any] = {"nodeSelector": {"pool": "x"}}
    objs = [
        node("na", {ZONE: "a", "pool": "x"}),
        node("nb", {ZONE: "b", "pool": "y"}),
        pod("w0", labels=APP, node_name="na"),
    ]
    # Honor (default): zone b's node fails the pod's selector, so zone b is not a domain.
    assert judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[c], **sel), "na")) is None
    ignore = spread(ZONE, 1, APP, nodeAffinityPolicy="Ignore")
    refused(
        judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[ignore], **sel), "na")),
        "PodTopologySpread",
    )


def test_spread_node_taints_policy() -> None:
    taint = {"key": "t", "value": "v", "effect": "NoSchedule"}
    objs = [
        node("na", {ZONE: "a"}),
        node("nb", {ZONE: "b"}, taints=[taint]),
        pod("w0", labels=APP, node_name="na"),
    ]
    # Ignore (default): the tainted zone b still counts, with 0 pods.
    refused(
        judge(
            objs, (pod("w1", labels=APP, topologySpreadConstraints=[spread(ZONE, 1, APP)]), "na")
        ),
        "PodTopologySpread",
    )
    honor = spread(ZONE, 1, APP, nodeTaintsPolicy="Honor")
    assert judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[honor]), "na")) is None


def test_spread_min_domains() -> None:
    objs = [
        node("na", {ZONE: "a"}),
        node("nb", {ZONE: "b"}),
        pod("w0", labels=APP, node_name="na"),
        pod("w1", labels=APP, node_name="nb"),
    ]
    plain = spread(ZONE, 1, APP)
    assert judge(objs, (pod("w2", labels=APP, topologySpreadConstraints=[plain]), "na")) is None
    three = spread(ZONE, 1, APP, minDomains=3)  # 2 domains < 3: the min counts as 0
    refused(
        judge(objs, (pod("w2", labels=APP, topologySpreadConstraints=[three]), "na")),
        "PodTopologySpread",
    )


def test_spread_match_label_keys_and_namespace() -> None:
    c = spread(ZONE, 1, APP, matchLabelKeys=["rev"])
    objs = _zones(
        pod("old0", labels={**APP, "rev": "1"}, node_name="na"),
        pod("old1", labels={**APP, "rev": "1"}, node_name="na"),
        pod("other", labels=APP, namespace="elsewhere", node_name="na"),
    )
    new = {**APP, "rev": "2"}
    assert judge(objs, (pod("n0", labels=new, topologySpreadConstraints=[c]), "na")) is None
    refused(
        judge(objs, (pod("n0", labels={**APP, "rev": "1"}, topologySpreadConstraints=[c]), "na")),
        "PodTopologySpread",
    )


def test_spread_schedule_anyway_is_not_a_filter() -> None:
    c = spread(ZONE, 1, APP, whenUnsatisfiable="ScheduleAnyway")
    objs = _zones(pod("w0", labels=APP, node_name="na"))
    assert judge(objs, (pod("w1", labels=APP, topologySpreadConstraints=[c]), "na")) is None


def test_spread_sequential_versus_final_state() -> None:
    c = spread(ZONE, 1, APP)
    objs = _zones()
    pods = [pod(f"w{i}", labels=APP, topologySpreadConstraints=[c]) for i in range(3)]
    order = [(pods[0], "na"), (pods[1], "na"), (pods[2], "nb")]
    refused(judge(objs, *order), "PodTopologySpread")  # the second pod first makes skew 2
    refused(judge(objs, *order, final=True), "PodTopologySpread")
    assert judge(objs, (pods[0], "na"), (pods[1], "nb"), (pods[2], "nc"), final=True) is None


# -- inter-pod affinity -------------------------------------------------------------------------


def test_anti_affinity_of_the_newcomer() -> None:
    t = pod_term(ZONE, APP)
    objs = _zones(pod("w0", labels=APP, node_name="na"))
    p = pod("w1", labels=APP, affinity=affinity(anti=[t]))
    refused(judge(objs, (p, "na")), "InterPodAffinity")
    assert judge(objs, (p, "nb")) is None


def test_anti_affinity_on_a_key_no_node_carries() -> None:
    t = pod_term("no.such/key", APP)
    objs = _zones(pod("w0", labels=APP, node_name="na"))
    assert judge(objs, (pod("w1", labels=APP, affinity=affinity(anti=[t])), "na")) is None


def test_existing_pods_anti_affinity_against_the_newcomer() -> None:
    objs = _zones(pod("guard", affinity=affinity(anti=[pod_term(ZONE, APP)]), node_name="na"))
    refused(judge(objs, (pod("w", labels=APP), "na")), "InterPodAffinity")
    assert judge(objs, (pod("w", labels=APP), "nb")) is None
    assert judge(objs, (pod("w", labels={"app": "db"}), "na")) is None


def test_affinity_needs_a_pod_in_the_domain() -> None:
    t = pod_term(ZONE, {"app": "db"})
    objs = _zones(pod("db", labels={"app": "db"}, node_name="nb"))
    p = pod("w", labels=APP, affinity=affinity(pod_affinity=[t]))
    assert judge(objs, (p, "nb")) is None
    refused(judge(objs, (p, "na")), "InterPodAffinity")


def test_affinity_first_pod_rule() -> None:
    t = pod_term(ZONE, APP)
    objs = _zones()
    p = pod("w0", labels=APP, affinity=affinity(pod_affinity=[t]))
    assert judge(objs, (p, "na")) is None  # first of a self-affine group
    q = pod("w1", labels=APP, affinity=affinity(pod_affinity=[t]))
    refused(judge(objs, (p, "na"), (q, "nb")), "InterPodAffinity")
    assert judge(objs, (p, "na"), (q, "na")) is None
    # not self-affine: no first-pod exception
    other = pod("x", labels={"app": "x"}, affinity=affinity(pod_affinity=[t]))
    refused(judge(objs, (other, "na")), "InterPodAffinity")
    # the candidate must carry the key
    refused(judge([node("bare")], (p, "bare")), "InterPodAffinity")


def test_affinity_namespaces_and_namespace_selector() -> None:
    ns = [
        {"kind": "Namespace", "metadata": {"name": n, "labels": {"team": t}}}
        for n, t in (("prod", "a"), ("dev", "b"))
    ]
    objs = _zones(*ns, pod("db", labels={"app": "db"}, namespace="prod", node_name="nb"))
    own_ns = pod("w", affinity=affinity(pod_affinity=[pod_term(ZONE, {"app": "db"})]))
    refused(judge(objs, (own_ns, "nb")), "InterPodAffinity")  # default: the pod's own namespace
    listed = pod(
        "w", affinity=affinity(pod_affinity=[pod_term(ZONE, {"app": "db"}, namespaces=["prod"])])
    )
    assert judge(objs, (listed, "nb")) is None
    by_label = pod(
        "w",
        affinity=affinity(
            pod_affinity=[
                pod_term(ZONE, {"app": "db"}, namespaceSelector={"matchLabels": {"team": "a"}})
            ]
        ),
    )
    assert judge(objs, (by_label, "nb")) is None
    wrong = pod(
        "w",
        affinity=affinity(
            pod_affinity=[
                pod_term(ZONE, {"app": "db"}, namespaceSelector={"matchLabels": {"team": "b"}})
            ]
        ),
    )
    refused(judge(objs, (wrong, "nb")), "InterPodAffinity")
    every = pod("w", affinity=affinity(anti=[pod_term(ZONE, {"app": "db"}, namespaceSelector={})]))
    refused(judge(objs, (every, "nb")), "InterPodAffinity")


# -- volumes ------------------------------------------------------------------------------------


def _pvc(name: str, volume: str | None = None, cls: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if cls:
        spec["storageClassName"] = cls
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _pv(
    name: str,
    labels: dict[str, str] | None = None,
    zones: list[str] | None = None,
    driver: str = "ebs",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"csi": {"driver": driver, "volumeHandle": f"h-{name}"}}
    if zones:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": zones}]}
                ]
            }
        }
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
    }


def _mounting(name: str, *claims: str) -> dict[str, Any]:
    return pod(
        name, volumes=[{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    )


def test_volume_zone_labels_and_node_affinity() -> None:
    by_label = [*_zones(), _pvc("c", volume="v"), _pv("v", labels={ZONE: "a__b"})]
    assert judge(by_label, (_mounting("p", "c"), "nb")) is None
    refused(judge(by_label, (_mounting("p", "c"), "nc")), "VolumeBinding")
    by_affinity = [*_zones(), _pvc("c", volume="v"), _pv("v", zones=["c"])]
    assert judge(by_affinity, (_mounting("p", "c"), "nc")) is None
    refused(judge(by_affinity, (_mounting("p", "c"), "na")), "VolumeBinding")


def test_unbound_claims() -> None:
    wffc = {
        "kind": "StorageClass",
        "metadata": {"name": "w"},
        "provisioner": "ebs",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": ["a"]}]}],
    }
    immediate = {"kind": "StorageClass", "metadata": {"name": "i"}, "provisioner": "ebs"}
    objs = [*_zones(), wffc, immediate, _pvc("late", cls="w"), _pvc("now", cls="i")]
    assert judge(objs, (_mounting("p", "late"), "na")) is None
    refused(judge(objs, (_mounting("p", "late"), "nb")), "VolumeBinding")
    refused(judge(objs, (_mounting("p", "now"), "na")), "VolumeBinding")
    refused(judge(objs, (_mounting("p", "missing"), "na")), "VolumeBinding")


def test_attach_limits() -> None:
    csinode = {
        "kind": "CSINode",
        "metadata": {"name": "n"},
        "spec": {"drivers": [{"name": "ebs", "nodeID": "i", "allocatable": {"count": 2}}]},
    }
    vols = [x for i in range(3) for x in (_pvc(f"c{i}", volume=f"v{i}"), _pv(f"v{i}"))]
    objs = [
        node("n"),
        csinode,
        *vols,
        {
            **_mounting("a", "c0", "c1"),
            "spec": {**_mounting("a", "c0", "c1")["spec"], "nodeName": "n"},
        },
    ]
    assert judge(objs, (_mounting("b", "c0"), "n")) is None  # already attached: no new volume
    refused(judge(objs, (_mounting("b", "c2"), "n")), "NodeVolumeLimits")
    other = [x for x in objs if x.get("kind") != "CSINode"]
    assert judge(other, (_mounting("b", "c2"), "n")) is None  # no CSINode: no limit known
