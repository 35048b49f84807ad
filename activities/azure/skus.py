"""One Resource SKU (``Microsoft.Compute/skus``) read into the facts the catalog needs.

Capabilities arrive as name/value strings; restrictions remove the whole region or some of
its zones for this subscription. Everything here reads the SDK's ``ResourceSku`` model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VIRTUAL_MACHINES = "virtualMachines"


def _same_location(a: str, b: str) -> bool:
    return a.replace(" ", "").lower() == b.replace(" ", "").lower()


@dataclass(frozen=True, slots=True)
class Sku:
    name: str  # Standard_D2s_v5
    size: str  # D2s_v5
    family: str  # standardDSv5Family (the quota family)
    capabilities: dict[str, str]
    zones: tuple[str, ...]  # logical zones left after zone restrictions ("1", "2", "3")
    location_restricted: bool  # NotAvailableForSubscription in the whole region

    @staticmethod
    def from_sdk(sku: Any, region: str) -> Sku:
        """Read an ``azure.mgmt.compute.models.ResourceSku`` for ``region``."""
        caps = {str(c.name): str(c.value) for c in (sku.capabilities or []) if c.name}
        zones: set[str] = set()
        for info in sku.location_info or []:
            if info.location and _same_location(info.location, region):
                zones.update(info.zones or [])
        restricted = False
        for r in sku.restrictions or []:
            if not any(_same_location(v, region) for v in r.values_property or []):
                continue
            if r.type == "Location":
                restricted = True
            elif r.restriction_info is not None:
                zones.difference_update(r.restriction_info.zones or [])
        return Sku(
            name=str(sku.name),
            size=str(sku.size or ""),
            family=str(sku.family or ""),
            capabilities=caps,
            zones=() if restricted else tuple(sorted(zones)),
            location_restricted=restricted,
        )

    def _flag(self, name: str) -> bool:
        for key, value in self.capabilities.items():
            if key.lower() == name.lower():
                return value.lower() == "true"
        return False

    def _number(self, name: str) -> float | None:
        value = self.capabilities.get(name)
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            return None

    def _int(self, name: str) -> int:
        value = self._number(name)
        return int(value) if value is not None else 0

    @property
    def vcpus(self) -> int | None:
        value = self._number("vCPUs")
        return int(value) if value is not None else None

    @property
    def memory_gib(self) -> float | None:
        """The ``MemoryGB`` capability, which despite its name is in GiB."""
        return self._number("MemoryGB")

    @property
    def gpus(self) -> int:
        return self._int("GPUs")

    @property
    def architecture(self) -> str:
        return self.capabilities.get("CpuArchitectureType", "x64")

    @property
    def accelerated_networking(self) -> bool:
        return self._flag("AcceleratedNetworkingEnabled")

    @property
    def premium_io(self) -> bool:
        return self._flag("PremiumIO")

    @property
    def low_priority_capable(self) -> bool:
        return self._flag("LowPriorityCapable")

    @property
    def encryption_at_host(self) -> bool:
        return self._flag("EncryptionAtHostSupported")

    @property
    def hyperv_generations(self) -> tuple[str, ...]:
        """``("1", "2")`` from ``HyperVGenerations: V1,V2``."""
        raw = self.capabilities.get("HyperVGenerations", "").upper()
        return tuple(g for g, token in (("1", "V1"), ("2", "V2")) if token in raw)

    @property
    def trusted_launch_capable(self) -> bool:
        """Generation 2 and not marked ``TrustedLaunchDisabled``."""
        return "2" in self.hyperv_generations and not self._flag("TrustedLaunchDisabled")

    @property
    def ultra_ssd_regional(self) -> bool:
        return self._flag("UltraSSDAvailable")

    def ephemeral_os_max_gb(self) -> int:
        """The largest ephemeral OS disk in GB (10^9 bytes): NVMe, else cache, else resource
        disk, as the provider picks the placement; 0 where the SKU has none."""
        if not self._flag("EphemeralOSDiskSupported"):
            return 0
        nvme_mib = self._int("NvmeDiskSizeInMiB")
        placements = self.capabilities.get("SupportedEphemeralOSDiskPlacements", "")
        if nvme_mib > 0 and "nvmedisk" in placements.lower():
            return nvme_mib * 2**20 // 10**9
        cached = self._int("CachedDiskBytes")
        if cached > 0:
            return cached // 10**9
        resource_mib = self._int("MaxResourceVolumeMB")  # MiB, despite the name
        if resource_mib > 0:
            return resource_mib * 2**20 // 10**9
        return 0
