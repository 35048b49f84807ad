"""Per-node volume attach limits where Karpenter counts them (docs/scheduling.md, "Volume
attach limits"): an existing node's CSINode count per CSI driver bounds the distinct volumes
its pods use; a new NodeClaim has no such limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.catalogs import catalog
from tests.support.labels import CAPACITY_TYPE
from tests.support.manifests import node, nodepool, pod, pvc, req
from tests.support.plans import plan, where
from worker.cli import main

EBS = "ebs.csi.aws.com"
EFS = "efs.csi.aws.com"
OD = [req(CAPACITY_TYPE, "In", "on-demand"), req("kubernetes.io/arch", "In", "amd64")]


def csinode(name: str, **counts: int | None) -> dict[str, Any]:
    """A CSINode; keyword ``ebs=25`` publishes driver ebs.csi.aws.com with that count."""
    drivers = []
    for key, count in counts.items():
        d: dict[str, Any] = {"name": {"ebs": EBS, "efs": EFS}[key], "nodeID": f"i-{name}"}
        if count is not None:
            d["allocatable"] = {"count": count}
        drivers.append(d)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": drivers},
    }


def storage_class(name: str, provisioner: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def csi_pv(name: str, driver: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"capacity": {"storage": "10Gi"}, "csi": {"driver": driver, "volumeHandle": name}},
    }


def _cluster(limit: int | None, used: int, **extra: int | None) -> list[dict[str, Any]]:
    """A NodePool, one 4-cpu node with a CSINode publishing ``limit`` EBS attachments, and a
    pod bound there using ``used`` EBS volumes (gp3 StorageClass)."""
    claims = [f"bound-{i}" for i in range(used)]
    return [
        nodepool(requirements=OD),
        storage_class("gp3", EBS),
        storage_class("efs", EFS),
        node("n1", "4", "16Gi", nodepool="default"),
        csinode("n1", ebs=limit, **extra),
        *[pvc(c, storage_class="gp3") for c in claims],
        pod("db-0", "500m", "1Gi", node_name="n1", pvcs=claims),
    ]


def test_a_pod_whose_volume_would_pass_the_node_limit_goes_to_a_new_node() -> None:
    out = plan([*_cluster(2, 2), pvc("data", storage_class="gp3"), pod("p", "100m", pvcs=["data"])])
    assert where(out)["default/p"].startswith("claim")


def test_a_pod_within_the_node_limit_stays_on_the_node() -> None:
    out = plan([*_cluster(3, 2), pvc("data", storage_class="gp3"), pod("p", "100m", pvcs=["data"])])
    assert where(out)["default/p"] == "node:n1"


def test_pods_fill_the_node_up_to_its_limit_then_go_elsewhere() -> None:
    docs = _cluster(4, 1)
    for i in range(5):
        docs += [pvc(f"d{i}", storage_class="gp3"), pod(f"p{i}", "100m", pvcs=[f"d{i}"])]
    out = plan(docs)
    on_node = [p for p, w in where(out).items() if w == "node:n1"]
    assert len(on_node) == 3  # 1 volume in use + 3 = the limit of 4
    assert sum(1 for w in where(out).values() if w.startswith("claim")) == 2


def test_a_volume_already_on_the_node_counts_once() -> None:
    # The pending pod mounts a claim the bound pod already uses: nothing new to attach.
    out = plan([*_cluster(2, 2), pod("p", "100m", pvcs=["bound-0"])])
    assert where(out)["default/p"] == "node:n1"


def test_the_driver_of_a_bound_pv_counts_before_the_storage_class() -> None:
    # The claim names the gp3 class but is bound to an EFS volume: it counts under EFS, which
    # the node does not limit.
    docs = [
        *_cluster(2, 2),
        csi_pv("pv-efs", EFS),
        pvc("shared", storage_class="gp3", volume_name="pv-efs"),
        pod("p", "100m", pvcs=["shared"]),
    ]
    assert where(plan(docs))["default/p"] == "node:n1"


def test_a_driver_limit_of_zero_and_other_drivers() -> None:
    docs = [
        *_cluster(2, 0, efs=0),
        pvc("files", storage_class="efs"),
        pod("f", "100m", pvcs=["files"]),
        pvc("block", storage_class="gp3"),
        pod("b", "100m", pvcs=["block"]),
    ]
    out = plan(docs)
    assert where(out)["default/f"].startswith("claim")
    assert where(out)["default/b"] == "node:n1"


def test_a_driver_without_a_published_count_is_unlimited() -> None:
    out = plan([*_cluster(None, 5), pvc("d", storage_class="gp3"), pod("p", "100m", pvcs=["d"])])
    assert where(out)["default/p"] == "node:n1"


def test_generic_ephemeral_volumes_count() -> None:
    eph = {
        "name": "scratch",
        "ephemeral": {"volumeClaimTemplate": {"spec": {"storageClassName": "gp3"}}},
    }
    out = plan([*_cluster(2, 2), pod("p", "100m", volumes=[eph])])
    assert where(out)["default/p"].startswith("claim")


def test_new_nodes_have_no_volume_limit_as_in_karpenter() -> None:
    # No CSINode exists for a node not yet launched: 40 single-volume pods share one claim.
    docs: list[dict[str, Any]] = [nodepool(requirements=OD), storage_class("gp3", EBS)]
    for i in range(40):
        docs += [pvc(f"d{i}", storage_class="gp3"), pod(f"p{i}", "50m", "64Mi", pvcs=[f"d{i}"])]
    out = plan([*docs, csinode("elsewhere", ebs=1)])
    assert len(out["nodeClaims"]) == 1


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (-1, "spec.drivers[0].allocatable.count: must be from 0 to 2147483647, not -1"),
        ("25", "spec.drivers[0].allocatable.count: expected an integer"),
        (2.5, "spec.drivers[0].allocatable.count: expected an integer"),
        (True, "spec.drivers[0].allocatable.count: expected an integer"),
        (2**31, "spec.drivers[0].allocatable.count: must be from 0 to 2147483647"),
    ],
)
def test_a_bad_csinode_count_is_one_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], count: object, message: str
) -> None:
    bad = csinode("n1", ebs=1)
    bad["spec"]["drivers"][0]["allocatable"]["count"] = count
    manifests = tmp_path / "m.yaml"
    manifests.write_text(yaml.safe_dump_all([nodepool(requirements=OD), bad]))
    cat = tmp_path / "catalog.yaml"
    cat.write_text(yaml.safe_dump(catalog()))
    code = main(["plan", "-f", str(manifests), "--catalog", str(cat), "-o", "json"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1, err
    assert "CSINode n1" in err and message in err


def test_a_csinode_driver_without_a_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = csinode("n1", ebs=1)
    del bad["spec"]["drivers"][0]["name"]
    manifests = tmp_path / "m.yaml"
    manifests.write_text(yaml.safe_dump_all([nodepool(requirements=OD), bad]))
    cat = tmp_path / "catalog.yaml"
    cat.write_text(yaml.safe_dump(catalog()))
    code = main(["plan", "-f", str(manifests), "--catalog", str(cat)])
    err = capsys.readouterr().err
    assert code == 2 and "spec.drivers[0].name is required" in err and err.count("\n") == 1


def test_a_pod_refused_for_its_volume_does_not_answer_for_a_pod_alike_without_one() -> None:
    """The solver remembers a pod class's failure until something changes; a failure caused
    by a pod's own volumes must not answer for the next pod of the class. Here no NodePool
    exists: p1 (one more EBS volume) fits nowhere, p2 (the same pod without it) takes n1."""
    docs = [d for d in _cluster(2, 2) if d["kind"] != "NodePool"]
    out = plan(
        [
            *docs,
            pvc("data", storage_class="gp3"),
            pod("p1", "100m", labels={"app": "x"}, pvcs=["data"]),
            pod("p2", "100m", labels={"app": "x"}),
        ]
    )
    assert where(out)["default/p2"] == "node:n1"
    assert [u["pod"] for u in out["unschedulable"]] == ["default/p1"]
