"""NodePool and EC2NodeClass fields the parity table (docs/parity.md) names that no other test
showed in isolation: what a NodePool's template puts on each NodeClaim, a ``nodeClassRef`` to
another kind, and every ``metadataOptions`` and EBS field in the launch template."""

from __future__ import annotations

import json
from typing import Any

from activities.ec2.capacity import ephemeral_storage_bytes, kube_reserved
from activities.ec2.families import AL2023, FAMILIES
from activities.ec2.launch_templates import LaunchTemplateInput
from activities.lifecycle.registration import node_patch
from activities.planning.plan import body_for
from activities.status import nodepools as nodepool_status
from models.ec2nodeclass import EC2NodeClass, KubeletConfiguration
from models.nodepool import NodePool
from models.requirements import Requirements
from models.resources import CPU, MEMORY
from scheduling.solving.result import PlannedClaim
from tests.support.manifests import nodepool_body
from tests.support.plan_cli import nodeclass

NOEXEC = {
    "key": "dedicated",
    "value": "gpu",
    "effect": "NoExecute",
    "timeAdded": "2026-01-01T00:00:00Z",
}


def _claim(pool: str) -> PlannedClaim:
    reqs = Requirements.from_selector_terms(
        [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]
    )
    return PlannedClaim(pool, [], reqs, ["us-east-1a"], ["on-demand"], 0.1, {"cpu": 1000}, [])


def test_the_template_reaches_each_nodeclaim() -> None:
    """Labels, annotations, taints (with ``timeAdded``), startup taints, expireAfter,
    terminationGracePeriod and the nodeClassRef are copied to the claim as Karpenter does."""
    body = nodepool_body(
        "gpu",
        node_class="accel",
        requirements=[],
        labels={"team": "ml"},
        template={
            "taints": [NOEXEC],
            "startupTaints": [{"key": "agent-not-ready", "effect": "NoSchedule"}],
            "expireAfter": "168h",
            "terminationGracePeriod": "2h",
        },
    )
    body["spec"]["template"]["metadata"]["annotations"] = {"example.com/owner": "ml-platform"}
    pool = NodePool.model_validate(body)
    claim = body_for(_claim("gpu"), pool, "gpu-abcde")
    meta, spec = claim["metadata"], claim["spec"]
    assert meta["labels"] == {"team": "ml", "karpenter.sh/nodepool": "gpu"}
    assert meta["annotations"]["example.com/owner"] == "ml-platform"
    assert spec["taints"] == [NOEXEC]
    assert spec["startupTaints"] == [{"key": "agent-not-ready", "effect": "NoSchedule"}]
    assert (spec["expireAfter"], spec["terminationGracePeriod"]) == ("168h", "2h")
    assert spec["nodeClassRef"] == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "accel",
    }
    assert spec["requirements"] == [
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
    ]


def test_a_nodeclassref_to_another_kind_or_a_missing_class_makes_the_pool_not_ready() -> None:
    body = nodepool_body("p", requirements=[])
    body["spec"]["template"]["spec"]["nodeClassRef"] = {
        "group": "karpenter.azure.com",
        "kind": "AKSNodeClass",
        "name": "default",
    }
    c = nodepool_status.nodeclass_readiness(body, None)
    assert (c.status, c.reason) == ("False", "UnsupportedNodeClass")
    assert "karpenter.azure.com/AKSNodeClass" in c.message
    missing = nodepool_status.nodeclass_readiness(nodepool_body("p", requirements=[]), None)
    assert (missing.status, missing.reason) == ("False", "NodeClassNotFound")
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    ok = nodepool_status.nodeclass_readiness(nodepool_body("p", requirements=[]), ready)
    assert ok.status == "True"


def _template(**spec: Any) -> dict[str, Any]:
    body = nodeclass("disks", None)
    body["spec"].update(spec)
    nc = EC2NodeClass.model_validate(body)
    built = LaunchTemplateInput.build(nc, FAMILIES[AL2023], "ami-1", "", ["sg-1"], "profile")
    return built.data()


def test_every_metadata_option_and_ebs_field_reaches_the_launch_template() -> None:
    ebs = {
        "volumeSize": "100Gi",
        "volumeType": "io2",
        "iops": 4000,
        "throughput": 250,
        "encrypted": True,
        "kmsKeyID": "arn:aws:kms:us-east-1:111122223333:key/abc",
        "deleteOnTermination": False,
        "snapshotID": "snap-0123",
    }
    data = _template(
        metadataOptions={
            "httpEndpoint": "disabled",
            "httpProtocolIPv6": "enabled",
            "httpPutResponseHopLimit": 3,
            "httpTokens": "optional",
        },
        blockDeviceMappings=[{"deviceName": "/dev/xvdb", "ebs": ebs, "rootVolume": True}],
    )
    assert data["MetadataOptions"] == {
        "HttpEndpoint": "disabled",
        "HttpProtocolIpv6": "enabled",
        "HttpPutResponseHopLimit": 3,
        "HttpTokens": "optional",
        "InstanceMetadataTags": "disabled",
    }
    assert data["BlockDeviceMappings"] == [
        {
            "DeviceName": "/dev/xvdb",
            "Ebs": {
                "VolumeSize": 100,
                "VolumeType": "io2",
                "Iops": 4000,
                "Throughput": 250,
                "Encrypted": True,
                "KmsKeyId": "arn:aws:kms:us-east-1:111122223333:key/abc",
                "DeleteOnTermination": False,
                "SnapshotId": "snap-0123",
            },
        }
    ]
    # Karpenter's defaults when the class says nothing: IMDSv2 only, one hop, encrypted gp3.
    plain = _template()
    assert plain["MetadataOptions"]["HttpTokens"] == "required"
    assert plain["MetadataOptions"]["HttpPutResponseHopLimit"] == 1
    assert json.dumps(plain["BlockDeviceMappings"][0]["Ebs"], sort_keys=True) == json.dumps(
        {"Encrypted": True, "VolumeSize": 20, "VolumeType": "gp3"}, sort_keys=True
    )


def test_the_root_volume_sizes_ephemeral_storage() -> None:
    """``rootVolume: true`` marks the mapping whose size is the node's ephemeral storage,
    whatever its device name."""
    body = nodeclass("disks", None)
    body["spec"]["blockDeviceMappings"] = [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi"}},
        {"deviceName": "/dev/xvdz", "ebs": {"volumeSize": "200Gi"}, "rootVolume": True},
    ]
    nc = EC2NodeClass.model_validate(body)
    family = FAMILIES[AL2023]
    size = ephemeral_storage_bytes({}, family, nc.spec.block_device_mappings, None)
    assert size == 200 * 2**30
    without = [m.model_copy(update={"root_volume": False}) for m in nc.spec.block_device_mappings]
    assert ephemeral_storage_bytes({}, family, without, None) == 20 * 2**30


def test_registration_puts_the_claims_labels_and_taints_on_the_node() -> None:
    """The Node gets the claim's labels, its single-value requirements as labels, and its
    taints and startup taints whole (``timeAdded`` included), as Karpenter registers it."""
    node = {
        "metadata": {"name": "ip-10-0-0-1", "labels": {}, "resourceVersion": "7"},
        "spec": {"taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
    }
    claim = {
        "metadata": {"name": "gpu-abcde", "uid": "u-1", "labels": {"team": "ml"}},
        "spec": {
            "requirements": [{"key": "example.com/tier", "operator": "In", "values": ["gold"]}],
            "taints": [NOEXEC],
            "startupTaints": [{"key": "agent-not-ready", "effect": "NoSchedule"}],
        },
    }
    patch = node_patch(node, claim)
    assert patch is not None
    labels = patch["metadata"]["labels"]
    assert labels["team"] == "ml" and labels["example.com/tier"] == "gold"
    assert patch["spec"]["taints"] == [NOEXEC, {"key": "agent-not-ready", "effect": "NoSchedule"}]


def test_kube_reserved_replaces_the_computed_reserve_per_resource() -> None:
    """``kubelet.kubeReserved`` wins over Karpenter's computed kube-reserved for the resources
    it names; the others keep the computed value (2 vCPUs: 70m; 29 pods: 574Mi)."""
    computed = kube_reserved(2000, 29, None)
    assert computed[CPU] == 70 and computed[MEMORY] == 574 * 2**20 * 1000
    kubelet = KubeletConfiguration.model_validate({"kubeReserved": {"cpu": "500m"}})
    chosen = kube_reserved(2000, 29, kubelet)
    assert chosen[CPU] == 500 and chosen[MEMORY] == computed[MEMORY]


def test_raid0_instance_store_is_the_ephemeral_storage() -> None:
    """``instanceStorePolicy: RAID0``: a type with instance storage offers all of it as
    ephemeral storage; one without keeps the root volume's size."""
    family = FAMILIES[AL2023]
    nvme = {"InstanceStorageInfo": {"TotalSizeInGB": 300}}
    assert ephemeral_storage_bytes(nvme, family, [], "RAID0") == 300 * 10**9
    assert ephemeral_storage_bytes(nvme, family, [], None) == family.default_volume_bytes
    assert ephemeral_storage_bytes({}, family, [], "RAID0") == family.default_volume_bytes
