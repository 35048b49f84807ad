"""The AKSNodeClass hash: every spec field Karpenter Azure hashes moves it; tags, list order,
and defaults written out do not; the version is never one Karpenter writes."""

from __future__ import annotations

from typing import Any

import pytest

from models.aksnodeclass import AKSNodeClass
from models.aksnodeclass_hash import HASH_VERSION, hash_annotations, nodeclass_hash

SUBNET = (
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/a"
)
BASE: dict[str, Any] = {
    "imageFamily": "Ubuntu2204",
    "vnetSubnetID": SUBNET,
    "kubelet": {"allowedUnsafeSysctls": ["net.core.somaxconn", "kernel.msg*"]},
}


def _hash(**spec: Any) -> str:
    body = {"metadata": {"name": "x"}, "spec": {**BASE, **spec}}
    return nodeclass_hash(AKSNodeClass.model_validate(body))


@pytest.mark.parametrize(
    "change",
    [
        {"imageFamily": "AzureLinux"},
        {"vnetSubnetID": SUBNET[:-1] + "b"},
        {"osDiskSizeGB": 256},
        {"maxPods": 50},
        {"fipsMode": "Disabled"},
        {"security": {"encryptionAtHost": True}},
        {"kubelet": {"containerLogMaxFiles": 9}},
        {"gpu": {"mode": "None"}},
    ],
)
def test_each_hashed_field_moves_the_hash(change: dict[str, Any]) -> None:
    assert _hash(**change) != _hash()


def test_tags_order_and_defaults_do_not() -> None:
    assert _hash(tags={"team": "a"}) == _hash()
    reordered = {"allowedUnsafeSysctls": ["kernel.msg*", "net.core.somaxconn"]}
    assert _hash(kubelet=reordered) == _hash()
    assert _hash(osDiskSizeGB=128) == _hash()  # the default, written out


def test_version_is_joinerys() -> None:
    stamped = hash_annotations(AKSNodeClass.model_validate({"metadata": {"name": "x"}}))
    assert stamped["karpenter.azure.com/aksnodeclass-hash-version"] == HASH_VERSION
    assert HASH_VERSION not in {"v1", "v2", "v3"}
    assert len(stamped["karpenter.azure.com/aksnodeclass-hash"]) == 16
