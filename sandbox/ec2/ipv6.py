"""IPv6 on a launched instance's primary interface, as EC2 gives it: what moto leaves out.

moto's CreateFleet ignores a launch template's interface fields: an instance launched from a
template whose primary interface asks for ``Ipv6AddressCount: 1`` and ``PrimaryIpv6: true``
gets no IPv6 address at all, in a subnet with an IPv6 CIDR block just as in one without, and
moto never marks an address primary (DescribeInstances' ``IsPrimaryIpv6`` is always false, the
instance's own ``Ipv6Address`` never set). EC2 gives the interface that many addresses from
the subnet's IPv6 block, whatever the subnet's ``AssignIpv6AddressOnCreation``; a subnet that
auto-assigns gives one even when the template asks for none; with ``PrimaryIpv6`` the first
becomes the instance's primary IPv6 address (``Ipv6Address``), the one that never changes.

Emulated here, explicitly, after moto launched the instance (:func:`apply_template`), and in
DescribeInstances' interface addresses (:func:`install`). Not emulated: EC2's refusal of an
IPv6 count in a subnet without an IPv6 block (here the interface simply gets none).

:func:`node_addresses` is the kubelet's side: the ``InternalIP`` a node registers with, the
primary IPv6 address in an IPv6 cluster (nodeadm passes it as ``--node-ip``), else the
primary private IPv4 address.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from moto.ec2.models.elastic_network_interfaces import NetworkInterface

_original: dict[str, Any] = {}


def _primary_interface(data: Mapping[str, Any]) -> Mapping[str, Any]:
    for interface in data.get("NetworkInterfaces") or []:
        if int(interface.get("DeviceIndex", 0) or 0) == 0 and not interface.get("NetworkCardIndex"):
            return dict(interface)
    return {}


def _flag(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def apply_template(backend: Any, data: Mapping[str, Any], instance_id: str) -> None:
    """Give ``instance_id``'s primary interface the IPv6 addresses its template's data (and
    its subnet) ask for, the first one primary when the template says ``PrimaryIpv6``."""
    instance = backend.get_instance(instance_id)
    nics = getattr(instance, "nics", {}) or {}
    eni = nics.get(0)
    if eni is None or not eni.subnet.ipv6_cidr_block_associations:
        return
    wanted = _primary_interface(data)
    count = int(wanted.get("Ipv6AddressCount") or len(wanted.get("Ipv6Addresses") or []))
    if count == 0 and _flag(getattr(eni.subnet, "assign_ipv6_address_on_creation", False)):
        count = 1
    missing = count - len(eni.ipv6_addresses)
    if missing > 0:
        backend.assign_ipv6_addresses(eni_id=eni.id, ipv6_count=missing)
    if _flag(wanted.get("PrimaryIpv6")) and eni.ipv6_addresses:
        eni.primary_ipv6 = eni.ipv6_addresses[0]
        instance.ipv6_address = eni.primary_ipv6  # DescribeInstances' Ipv6Address


def _addresses(self: NetworkInterface) -> list[dict[str, Any]]:
    """DescribeInstances' interface addresses, the primary one marked as EC2 marks it."""
    primary = getattr(self, "primary_ipv6", None)
    return [{"Ipv6Address": ip, "IsPrimaryIpv6": ip == primary} for ip in self.ipv6_addresses]


def install() -> None:
    """Mark primary IPv6 addresses in DescribeInstances (idempotent)."""
    if _original:
        return
    _original["instance_ipv6_address_list"] = NetworkInterface.__dict__[
        "instance_ipv6_address_list"
    ]
    NetworkInterface.instance_ipv6_address_list = property(_addresses)  # type: ignore[assignment,method-assign]


def uninstall() -> None:
    if _original:
        NetworkInterface.instance_ipv6_address_list = _original.pop(  # type: ignore[method-assign]
            "instance_ipv6_address_list"
        )


def node_addresses(instance: Mapping[str, Any], ip_family: str) -> list[dict[str, str]]:
    """The addresses a kubelet on ``instance`` (a DescribeInstances entry) registers its
    Node with: ``InternalIP`` of the cluster's family, and the private DNS name."""
    out: list[dict[str, str]] = []
    if ip_family == "ipv6":
        primary = instance.get("Ipv6Address")
        if not primary:
            for eni in instance.get("NetworkInterfaces") or []:
                if int((eni.get("Attachment") or {}).get("DeviceIndex", 0) or 0) == 0:
                    found = [a["Ipv6Address"] for a in eni.get("Ipv6Addresses") or []]
                    primary = found[0] if found else None
        if primary:
            out.append({"type": "InternalIP", "address": str(primary)})
    elif instance.get("PrivateIpAddress"):
        out.append({"type": "InternalIP", "address": str(instance["PrivateIpAddress"])})
    if instance.get("PrivateDnsName"):
        out.append({"type": "InternalDNS", "address": str(instance["PrivateDnsName"])})
        out.append({"type": "Hostname", "address": str(instance["PrivateDnsName"])})
    return out
