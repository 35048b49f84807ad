"""The instance-type catalog: EC2's descriptions and prices turned into ``models.InstanceType``.

Fetching (:func:`fetch_raw_catalog`) and building (:func:`build_catalog`) are separate so the
build, which runs on every scheduling pass against cached API data, can be measured and
tested on its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from activities.ec2.capacity import capacity_and_overhead
from activities.ec2.capacity_cache import UnavailableOfferings
from activities.ec2.errors import aws_errors
from activities.ec2.families import AL2023, AMIFamily, family_of
from activities.ec2.pricing import PricingProvider
from activities.ec2.settings import ProviderSettings
from activities.ec2.type_labels import (
    PLACEMENT_GROUP_ID,
    PLACEMENT_GROUP_PARTITION,
    TENANCY,
    TENANCY_DEFAULT,
    ZONE_ID,
    requirements_for,
)
from models.ec2nodeclass import BlockDeviceMapping, EC2NodeClass, KubeletConfiguration
from models.instancetype import InstanceType, Offering
from models.labels import CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT
from models.requirements import IN, Requirement

SUPPORTED_ARCHITECTURES = ("x86_64", "arm64")
CAPACITY_TYPES = (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT)
RAW_CATALOG_TTL_SECONDS = 300.0
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RawCatalog:
    """What EC2 said: type descriptions and, per type, the zones that offer it."""

    infos: tuple[dict[str, Any], ...]
    zones: dict[str, frozenset[str]]

    @property
    def region_zones(self) -> list[str]:
        return sorted({z for zs in self.zones.values() for z in zs})


def fetch_raw_catalog(ec2: Any) -> RawCatalog:
    """DescribeInstanceTypes (HVM, x86_64/arm64) and zone offerings, all pages."""
    infos: list[dict[str, Any]] = []
    with aws_errors("DescribeInstanceTypes"):
        pages = ec2.get_paginator("describe_instance_types").paginate(
            Filters=[
                {"Name": "supported-virtualization-type", "Values": ["hvm"]},
                {
                    "Name": "processor-info.supported-architecture",
                    "Values": list(SUPPORTED_ARCHITECTURES),
                },
            ]
        )
        for page in pages:
            infos.extend(page.get("InstanceTypes", []))
    zones: dict[str, set[str]] = {}
    with aws_errors("DescribeInstanceTypeOfferings"):
        pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
            LocationType="availability-zone"
        )
        for page in pages:
            for o in page.get("InstanceTypeOfferings", []):
                zones.setdefault(o["InstanceType"], set()).add(o["Location"])
    # Keep only types this region offers and whose first architecture we support.
    kept = tuple(
        i
        for i in sorted(infos, key=lambda i: str(i["InstanceType"]))
        if i["InstanceType"] in zones
        and (i.get("ProcessorInfo", {}).get("SupportedArchitectures") or [""])[0]
        in SUPPORTED_ARCHITECTURES
    )
    return RawCatalog(kept, {k: frozenset(v) for k, v in zones.items()})


@dataclass(frozen=True, slots=True)
class CatalogOptions:
    """Everything besides EC2's data that changes the numbers of a catalog."""

    region: str
    family: AMIFamily
    kubelet: KubeletConfiguration | None = None
    block_device_mappings: tuple[BlockDeviceMapping, ...] = ()
    instance_store_policy: str | None = None
    # Zones with a selected subnet; None = no NodeClass given, every zone counts.
    subnet_zones: frozenset[str] | None = None
    vm_memory_overhead_percent: float = 0.075
    reserved_enis: int = 0
    # What the NodeClass asks of the hardware: types that cannot give it are left out.
    nested_virtualization: bool = False
    connection_tracking: bool = False
    placement_strategy: str = ""  # the resolved placement group's, "" without one
    # (zone, zone id) of the NodeClass's subnets: a type's offered zones' ids become its
    # ``topology.k8s.aws/zone-id`` requirement, as Karpenter's (none known: no requirement)
    zone_ids: tuple[tuple[str, str], ...] = ()
    # the resolved placement group's id and partitions (a partition group's count, else 0)
    placement_group_id: str = ""
    placement_partitions: int = 0

    @staticmethod
    def for_nodeclass(
        settings: ProviderSettings,
        nodeclass: EC2NodeClass | None,
        subnet_zones: Iterable[str] | None = None,
        placement_strategy: str = "",
        zone_ids: Mapping[str, str] | None = None,
        placement_group: tuple[str, int] = ("", 0),
    ) -> CatalogOptions:
        spec = nodeclass.spec if nodeclass else None
        return CatalogOptions(
            region=settings.region,
            family=family_of(nodeclass),
            kubelet=spec.kubelet if spec else None,
            block_device_mappings=tuple(spec.block_device_mappings) if spec else (),
            instance_store_policy=spec.instance_store_policy if spec else None,
            subnet_zones=frozenset(subnet_zones) if subnet_zones is not None else None,
            vm_memory_overhead_percent=settings.vm_memory_overhead_percent,
            reserved_enis=settings.reserved_enis,
            nested_virtualization=bool(
                spec
                and spec.cpu_options is not None
                and spec.cpu_options.nested_virtualization == "enabled"
            ),
            connection_tracking=bool(spec and spec.connection_tracking is not None),
            placement_strategy=placement_strategy,
            zone_ids=tuple(sorted((zone_ids or {}).items())),
            placement_group_id=placement_group[0],
            placement_partitions=placement_group[1],
        )

    def cache_key(self) -> str:
        doc = {
            "region": self.region,
            "family": self.family.name,
            "kubelet": self.kubelet.to_wire() if self.kubelet else None,
            "bdm": [m.to_wire() for m in self.block_device_mappings],
            "isp": self.instance_store_policy,
            "zones": sorted(self.subnet_zones) if self.subnet_zones is not None else None,
            "vm": self.vm_memory_overhead_percent,
            "enis": self.reserved_enis,
            "nested": self.nested_virtualization,
            "conntrack": self.connection_tracking,
            "placement": self.placement_strategy,
            "zone_ids": [list(pair) for pair in self.zone_ids],
            "group": [self.placement_group_id, self.placement_partitions],
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def offerings_for(
    info: dict[str, Any],
    zones: Iterable[str],
    pricing: PricingProvider,
    unavailable: UnavailableOfferings,
    subnet_zones: frozenset[str] | None,
) -> list[Offering]:
    """Zone x capacity type, priced; unpriced pools are left out (they cannot be bought)."""
    name = str(info["InstanceType"])
    classes = set(info.get("SupportedUsageClasses") or [CAPACITY_TYPE_ON_DEMAND])
    out: list[Offering] = []
    for zone in sorted(zones):
        for ct in CAPACITY_TYPES:
            if ct not in classes:
                continue
            price = (
                pricing.on_demand_price(name)
                if ct == CAPACITY_TYPE_ON_DEMAND
                else pricing.spot_price(name, zone)
            )
            if price is None:
                continue
            available = (subnet_zones is None or zone in subnet_zones) and not (
                unavailable.is_unavailable(ct, name, zone)
            )
            out.append(Offering(zone, ct, price, available))
    return out


@dataclass(slots=True)
class StaticParts:
    """Per-type parts that do not depend on prices or capacity errors."""

    capacity: dict[str, int]
    overhead: dict[str, int]
    requirements: list[Requirement]


def static_parts(info: dict[str, Any], opts: CatalogOptions) -> StaticParts:
    capacity, overhead = capacity_and_overhead(
        info,
        opts.family,
        opts.kubelet,
        list(opts.block_device_mappings),
        opts.instance_store_policy,
        opts.vm_memory_overhead_percent,
        opts.reserved_enis,
    )
    build = opts.family.windows_build
    os = "windows" if build else "linux"
    return StaticParts(capacity, overhead, requirements_for(info, opts.region, os, build))


def compatible(info: dict[str, Any], opts: CatalogOptions) -> bool:
    """Whether the type can be launched as the NodeClass asks (Karpenter's checks): nested
    virtualization needs a processor that offers it, connection-tracking timeouts need a
    Nitro type, a placement group a type that supports its strategy, and AL2023 does not
    boot on the first Graviton (a1)."""
    name = str(info["InstanceType"])
    if opts.family.name == AL2023 and name.startswith("a1."):
        return False
    if opts.nested_virtualization:
        features = (info.get("ProcessorInfo") or {}).get("SupportedFeatures") or []
        if "nested-virtualization" not in features:
            return False
    if opts.placement_strategy:
        strategies = (info.get("PlacementGroupInfo") or {}).get("SupportedStrategies") or []
        if opts.placement_strategy not in strategies:
            return False
    return not (opts.connection_tracking and info.get("Hypervisor") != "nitro")


def build_catalog(
    raw: RawCatalog,
    pricing: PricingProvider,
    unavailable: UnavailableOfferings,
    opts: CatalogOptions,
    statics: dict[str, StaticParts] | None = None,
) -> list[InstanceType]:
    """InstanceTypes with at least one priced offering, by name. ``statics`` memoises per type."""
    out: list[InstanceType] = []
    for info in raw.infos:
        name = str(info["InstanceType"])
        if not compatible(info, opts):
            continue
        offerings = offerings_for(
            info, raw.zones.get(name, ()), pricing, unavailable, opts.subnet_zones
        )
        if not offerings:
            continue
        part = statics.get(name) if statics is not None else None
        if part is None:
            part = static_parts(info, opts)
            if statics is not None:
                statics[name] = part
        requirements = [*part.requirements, *placement_requirements(offerings, opts)]
        out.append(InstanceType.build(name, part.capacity, offerings, part.overhead, requirements))
    return out


def placement_requirements(
    offerings: Iterable[Offering], opts: CatalogOptions
) -> list[Requirement]:
    """The labels a node gets from where it is launched, as the type's requirements (as
    Karpenter's): the ids of the zones it is available in, and the tenancy Joinery launches
    (shared, ``default``; Karpenter also offers ``dedicated``, which Joinery cannot launch,
    so a pod or pool requiring it finds no type rather than a node it did not ask for)."""
    out = [Requirement.create(TENANCY, IN, [TENANCY_DEFAULT])]
    ids = dict(opts.zone_ids)
    offered = sorted({ids[o.zone] for o in offerings if o.zone in ids})
    if offered:
        out.append(Requirement.create(ZONE_ID, IN, offered))
    if opts.placement_group_id:
        # as Karpenter's: the group, and a partition group's partitions as a topology
        out.append(Requirement.create(PLACEMENT_GROUP_ID, IN, [opts.placement_group_id]))
    if opts.placement_partitions:
        numbers = [str(n) for n in range(1, opts.placement_partitions + 1)]
        out.append(Requirement.create(PLACEMENT_GROUP_PARTITION, IN, numbers))
    return out


@dataclass
class InstanceTypeProvider:
    """Caches EC2's raw catalog for a few minutes and the per-NodeClass build until it changes."""

    ec2: Any
    settings: ProviderSettings
    pricing: PricingProvider
    unavailable: UnavailableOfferings
    clock: Callable[[], float] = time.monotonic
    _raw: RawCatalog | None = field(default=None, init=False)
    _raw_at: float = field(default=0.0, init=False)
    _statics: dict[str, dict[str, StaticParts]] = field(default_factory=dict, init=False)
    _built: dict[tuple[str, int, int], list[InstanceType]] = field(default_factory=dict, init=False)
    _generation: int = field(default=0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    # Held while one fetch runs: callers arriving meanwhile wait for it (a cold worker's
    # first plan would otherwise fetch the whole catalog again, beside the warm-up).
    _fetching: threading.Lock = field(default_factory=threading.Lock, init=False)

    def refresh(self) -> RawCatalog:
        """Fetch types, offerings and prices now."""
        raw = fetch_raw_catalog(self.ec2)
        self.pricing.refresh()
        with self._lock:
            self._raw, self._raw_at = raw, self.clock()
            self._generation += 1
            self._built.clear()
        return raw

    def use_raw(self, raw: RawCatalog) -> None:
        """Adopt a raw catalog fetched elsewhere (one DescribeInstanceTypes per process)."""
        with self._lock:
            self._raw, self._raw_at = raw, self.clock()
            self._generation += 1
            self._built.clear()

    @property
    def loaded(self) -> bool:
        """Whether a catalog is at hand (a reader that must not wait for EC2 asks first)."""
        return self._raw is not None

    def raw(self) -> RawCatalog:
        """The catalog; an expired one is still served while a background fetch replaces it
        (a burst of pods after a quiet spell must not wait for DescribeInstanceTypes)."""
        current, fetched_at = self._raw, self._raw_at
        if current is not None:
            if self.clock() - fetched_at > RAW_CATALOG_TTL_SECONDS:
                self._refresh_in_background()
            return current
        with self._fetching:
            if self._raw is not None:  # fetched while we waited
                return self._raw
            return self.refresh()

    def _refresh_in_background(self) -> None:
        if not self._fetching.acquire(blocking=False):
            return  # one is already running

        def run() -> None:
            try:
                self.refresh()
            except Exception as exc:  # the stale copy stays; the next call tries again
                log.warning("refreshing the instance-type catalog failed: %s", exc)
            finally:
                self._fetching.release()

        threading.Thread(target=run, name="catalog-refresh", daemon=True).start()

    def list(
        self,
        nodeclass: EC2NodeClass | None = None,
        subnet_zones: Iterable[str] | None = None,
        placement_strategy: str = "",
        zone_ids: Mapping[str, str] | None = None,
        placement_group: tuple[str, int] = ("", 0),
    ) -> list[InstanceType]:
        raw = self.raw()
        opts = CatalogOptions.for_nodeclass(
            self.settings, nodeclass, subnet_zones, placement_strategy, zone_ids, placement_group
        )
        key = (opts.cache_key(), self.unavailable.seq_num, self._generation)
        with self._lock:
            cached = self._built.get(key)
            statics = self._statics.setdefault(key[0], {})
        if cached is not None:
            return cached
        built = build_catalog(raw, self.pricing, self.unavailable, opts, statics)
        with self._lock:
            self._built = {k: v for k, v in self._built.items() if k[0] != key[0]}
            self._built[key] = built
        return built
