"""What ``joinery doctor --provider azure`` reads besides SKUs, emulated: provider
registrations, resource groups, subnets and the regional compute usages (quota).

Nothing here is created through the API (the emulator answers only GETs): a test or the
sandbox seeds resource groups and subnets with :meth:`add_resource_group` and
:meth:`add_subnet`, changes usage with :meth:`set_usage`, and unregisters a namespace with
:meth:`unregister`. Every body has the REST field names and deserializes in the SDK's
``Provider``, ``ResourceGroup``, ``Subnet`` and ``Usage`` models.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

SUBNET_ID = re.compile(
    r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.Network"
    r"/virtualNetworks/(?P<vnet>[^/]+)/subnets/(?P<subnet>[^/]+)$",
    re.I,
)
# Every subscription's regional vCPU quota and each VM family's, unless a test sets them.
DEFAULT_LIMIT = 100
REGIONAL_CORES = ("cores", "Total Regional vCPUs")


class NotFound(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass
class ArmReads:
    """The emulated subscription's resources, keyed case-insensitively as ARM keys them."""

    _groups: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    _subnets: dict[str, dict[str, Any]] = field(default_factory=dict)
    _unregistered: set[str] = field(default_factory=set)
    _usage: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- seeding -------------------------------------------------------------------------
    def add_resource_group(self, subscription: str, name: str, location: str) -> dict[str, Any]:
        body = {
            "id": f"/subscriptions/{subscription}/resourceGroups/{name}",
            "name": name,
            "type": "Microsoft.Resources/resourceGroups",
            "location": location,
            "properties": {"provisioningState": "Succeeded"},
        }
        with self._lock:
            self._groups[(subscription.lower(), name.lower())] = body
        return body

    def add_subnet(self, subnet_id: str, address_prefix: str = "10.224.0.0/16") -> dict[str, Any]:
        if SUBNET_ID.match(subnet_id) is None:
            raise ValueError(f"not a subnet id: {subnet_id}")
        body = {
            "id": subnet_id,
            "name": subnet_id.rsplit("/", 1)[1],
            "type": "Microsoft.Network/virtualNetworks/subnets",
            "etag": 'W/"00000000-0000-0000-0000-000000000000"',
            "properties": {
                "addressPrefix": address_prefix,
                "provisioningState": "Succeeded",
                "privateEndpointNetworkPolicies": "Disabled",
                "privateLinkServiceNetworkPolicies": "Enabled",
            },
        }
        with self._lock:
            self._subnets[subnet_id.lower()] = body
        return body

    def remove_subnet(self, subnet_id: str) -> None:
        with self._lock:
            self._subnets.pop(subnet_id.lower(), None)

    def unregister(self, namespace: str) -> None:
        with self._lock:
            self._unregistered.add(namespace.lower())

    def set_usage(self, region: str, name: str, current: int, limit: int) -> None:
        """The usage of quota ``name`` (``cores`` or a family such as standardDSv3Family)."""
        with self._lock:
            self._usage[(region.lower(), name.lower())] = (current, limit)

    def clear(self) -> None:
        with self._lock:
            self._groups.clear()
            self._subnets.clear()
            self._unregistered.clear()
            self._usage.clear()

    # -- answers -------------------------------------------------------------------------
    def provider(self, subscription: str, namespace: str) -> dict[str, Any]:
        if not namespace.lower().startswith("microsoft."):
            raise NotFound(
                "InvalidResourceNamespace", f"The resource namespace '{namespace}' is invalid."
            )
        with self._lock:
            registered = namespace.lower() not in self._unregistered
        return {
            "id": f"/subscriptions/{subscription}/providers/{namespace}",
            "namespace": namespace,
            "registrationState": "Registered" if registered else "NotRegistered",
            "registrationPolicy": "RegistrationRequired",
            "resourceTypes": [],
        }

    def resource_group(self, subscription: str, name: str) -> dict[str, Any]:
        with self._lock:
            body = self._groups.get((subscription.lower(), name.lower()))
        if body is None:
            raise NotFound("ResourceGroupNotFound", f"Resource group '{name}' could not be found.")
        return body

    def subnet(self, path: str) -> dict[str, Any]:
        with self._lock:
            body = self._subnets.get(path.lower())
        if body is None:
            raise NotFound("NotFound", f"Resource {path} not found.")
        return body

    def usages(self, region: str, families: list[str]) -> list[dict[str, Any]]:
        """The regional vCPU quota and one per VM family of the region's SKUs."""
        names = [REGIONAL_CORES, *((f, f) for f in sorted(set(families)))]
        out = []
        with self._lock:
            for value, localized in names:
                current, limit = self._usage.get(
                    (region.lower(), value.lower()), (0, DEFAULT_LIMIT)
                )
                out.append(
                    {
                        "unit": "Count",
                        "currentValue": current,
                        "limit": limit,
                        "name": {"value": value, "localizedValue": localized},
                    }
                )
        return out
