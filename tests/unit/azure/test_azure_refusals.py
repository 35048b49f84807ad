"""Azure's capacity refusals read as Karpenter Azure reads them, the offerings each marks,
and where an ephemeral OS disk goes: written from the documented rules, not the code."""

from __future__ import annotations

import pytest

from activities.azure import refusals
from activities.azure.launch import ephemeral_placement
from activities.azure.skus import Sku
from activities.azure.vms import parse_vm_id, vm_zone
from activities.cloud.unavailable_offerings import UnavailableOfferings
from sandbox.azure.capacity_faults import KINDS, refusal

# Each emulated refusal (worded as Azure words it) → the kind the launch must see.
EXPECTED = {
    "SkuNotAvailable": refusals.SKU_NOT_AVAILABLE,
    "AllocationFailed": refusals.ALLOCATION_FAILED,
    "ZonalAllocationFailed": refusals.ZONAL_ALLOCATION_FAILED,
    "OverconstrainedAllocationRequest": refusals.OVERCONSTRAINED,
    "OverconstrainedZonalAllocationRequest": refusals.OVERCONSTRAINED_ZONAL,
    "family-quota": refusals.FAMILY_QUOTA,
    "regional-quota": refusals.REGIONAL_QUOTA,
    "low-priority-quota": refusals.LOW_PRIORITY_QUOTA,
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_emulated_refusal_is_recognized(kind: str) -> None:
    r = refusal(kind, size="Standard_D2s_v3", zone="1", priority="Spot", location="eastus", cores=2)
    assert refusals.kind_of(r.code, r.message) == EXPECTED[kind]


def test_other_errors_are_not_capacity() -> None:
    assert refusals.kind_of("OperationNotAllowed", "The VM is being deleted.") is None
    assert refusals.kind_of("InvalidParameter", "Allocation failed.") is None


def _marked(kind: str, capacity_type: str) -> set[tuple[str, str]]:
    cache = UnavailableOfferings()
    refusals.mark(kind, cache, "Standard_D2s_v3", "eastus-1", capacity_type)
    cells = [
        (ct, it, z)
        for ct in ("on-demand", "spot")
        for it in ("Standard_D2s_v3", "Standard_D4s_v3")
        for z in ("eastus-1", "eastus-2")
    ]
    return {(ct, f"{it}@{z}") for ct, it, z in cells if cache.is_unavailable(ct, it, z)}


def test_what_each_refusal_marks() -> None:
    d2 = "Standard_D2s_v3"
    d4 = "Standard_D4s_v3"
    assert _marked(refusals.LOW_PRIORITY_QUOTA, "spot") == {
        ("spot", f"{it}@{z}") for it in (d2, d4) for z in ("eastus-1", "eastus-2")
    }
    assert _marked(refusals.REGIONAL_QUOTA, "on-demand") == {
        ("on-demand", f"{it}@{z}") for it in (d2, d4) for z in ("eastus-1", "eastus-2")
    }
    for kind in (refusals.SKU_NOT_AVAILABLE, refusals.FAMILY_QUOTA, refusals.OVERCONSTRAINED):
        assert _marked(kind, "spot") == {("spot", f"{d2}@eastus-1"), ("spot", f"{d2}@eastus-2")}
    assert _marked(refusals.ZONAL_ALLOCATION_FAILED, "spot") == {
        ("spot", f"{d2}@eastus-1"),
        ("on-demand", f"{d2}@eastus-1"),
    }
    assert _marked(refusals.ALLOCATION_FAILED, "spot") == {
        (ct, f"{d2}@{z}") for ct in ("spot", "on-demand") for z in ("eastus-1", "eastus-2")
    }
    assert _marked(refusals.OVERCONSTRAINED_ZONAL, "on-demand") == {("on-demand", f"{d2}@eastus-1")}


def _sku(**caps: str) -> Sku:
    return Sku("Standard_X", "X", "standardXFamily", dict(caps), ("1",), False)


def test_ephemeral_os_disk_placement() -> None:
    both = "ResourceDisk,CacheDisk"
    cache_50 = str(50 * 2**30)
    assert ephemeral_placement(None, 30) == ""
    assert ephemeral_placement(_sku(EphemeralOSDiskSupported="False"), 30) == ""
    sku = _sku(
        EphemeralOSDiskSupported="True",
        SupportedEphemeralOSDiskPlacements=both,
        CachedDiskBytes=cache_50,
        MaxResourceVolumeMB="131072",
    )
    assert ephemeral_placement(sku, 50) == "CacheDisk"  # 53.6 GB of cache
    assert ephemeral_placement(sku, 100) == "ResourceDisk"  # 137 GB of resource disk
    assert ephemeral_placement(sku, 200) == ""
    nvme = _sku(
        EphemeralOSDiskSupported="True",
        SupportedEphemeralOSDiskPlacements="NvmeDisk,ResourceDisk",
        NvmeDiskSizeInMiB="228888",
    )
    assert ephemeral_placement(nvme, 128) == "NvmeDisk"


def test_vm_ids_and_zones() -> None:
    vm = "/subscriptions/s/resourceGroups/MC_rg/providers/Microsoft.Compute/virtualMachines/aks-a"
    assert parse_vm_id(vm) == ("MC_rg", "aks-a")
    with pytest.raises(ValueError):
        parse_vm_id("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/nics/a")
    assert vm_zone("eastus-2") == ["2"] and vm_zone("0") == []
