"""The catalog against moto's region data: sizes, Karpenter's formulas on known types, offerings."""

from __future__ import annotations

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from activities.ec2 import catalog as catalog_module
from activities.ec2.capacity import kube_reserved
from activities.ec2.capacity_cache import UnavailableOfferings
from activities.ec2.catalog import (
    RAW_CATALOG_TTL_SECONDS,
    CatalogOptions,
    InstanceTypeProvider,
    build_catalog,
)
from activities.ec2.families import FAMILIES
from activities.ec2.pricing import OFFLINE
from models.catalog import dump_catalog, load_catalog
from models.instancetype import InstanceType
from models.resources import render

MI = 2**20 * 1000


def by_name(types: list[InstanceType]) -> dict[str, InstanceType]:
    return {t.name: t for t in types}


def test_catalog_size_and_zones(env: Any) -> None:
    types = env.provider.instance_types()
    assert len(types) >= 800
    zones = {o.zone for t in types for o in t.offerings}
    assert zones == {f"us-east-1{z}" for z in "abcdef"}
    assert env.provider.pricing.on_demand_source == OFFLINE  # moto has no Pricing API
    archs = {t.requirements["kubernetes.io/arch"].any_value() for t in types}
    assert archs == {"amd64", "arm64"}


def test_m5_large_by_hand(env: Any) -> None:
    m5 = by_name(env.provider.instance_types())["m5.large"]
    # 8192 MiB - ceil(8192 * 7.5%) = 8192 - 615 = 7577 MiB; pods 3 ENIs x (10 - 1) + 2 = 29
    assert render(m5.capacity) == {
        "cpu": "2",
        "memory": "7577Mi",
        "pods": "29",
        "ephemeral-storage": "20Gi",
        # EKS's security-groups-for-pods table: m5.large has 9 branch network interfaces
        "vpc.amazonaws.com/pod-eni": "9",
    }
    # kube-reserved cpu 6% of 1000m + 1% of 1000m = 70m; memory 11 x 29 + 255 = 574Mi,
    # plus the 100Mi eviction threshold; disk 1Gi reserved + 10% of 20Gi = 2Gi eviction.
    assert render(m5.overhead) == {"cpu": "70m", "memory": "674Mi", "ephemeral-storage": "3Gi"}
    assert render(m5.allocatable)["memory"] == "6903Mi"
    labels = m5.requirements.labels()
    assert labels["karpenter.k8s.aws/instance-family"] == "m5"
    assert labels["karpenter.k8s.aws/instance-category"] == "m"
    assert labels["karpenter.k8s.aws/instance-generation"] == "5"
    assert labels["karpenter.k8s.aws/instance-size"] == "large"
    assert labels["karpenter.k8s.aws/instance-cpu"] == "2"
    assert labels["karpenter.k8s.aws/instance-memory"] == "8192"
    assert m5.requirements["karpenter.k8s.aws/instance-gpu-count"].operator == "DoesNotExist"
    od = [o for o in m5.offerings if o.capacity_type == "on-demand"]
    assert od and all(o.price == 0.096 for o in od)
    spot = [o for o in m5.offerings if o.capacity_type == "spot"]
    assert spot and all(0 < o.price < 0.096 for o in spot)


def test_graviton_gpu_and_big_types(env: Any) -> None:
    types = by_name(env.provider.instance_types())
    m6g = types["m6g.large"]
    assert m6g.requirements["kubernetes.io/arch"].any_value() == "arm64"
    # Graviton: 64 MiB CMA off the top, then 7.5%: 8128 - ceil(609.6) = 7518
    assert render(m6g.capacity)["memory"] == "7518Mi"
    g4 = types["g4dn.xlarge"]
    assert g4.capacity["nvidia.com/gpu"] == 1000
    assert g4.requirements.labels()["karpenter.k8s.aws/instance-gpu-name"] == "t4"
    assert g4.requirements.labels()["karpenter.k8s.aws/instance-gpu-manufacturer"] == "nvidia"
    inf2 = types["inf2.xlarge"]  # one Inferentia2 device of two cores
    assert inf2.capacity["aws.amazon.com/neuron"] == 1000
    assert inf2.capacity["aws.amazon.com/neuroncore"] == 2000
    m5_4x = types["m5.4xlarge"]
    # 60 + 10 + 2000 x 0.5% + 12000 x 0.25% = 110m
    assert render(m5_4x.overhead)["cpu"] == "110m"
    assert kube_reserved(96_000, 737, None)["cpu"] == 60 + 10 + 10 + 230


def test_vpc_resource_controller_resources(env: Any, make_nodeclass: Any) -> None:
    """pod-eni where EKS's security-groups-for-pods table lists branch interfaces (none on
    t3.micro, which it lists as unsupported); PrivateIPv4Address on Windows nodes only: the
    primary interface's IPv4 addresses less the node's own (m5.large: 10 - 1)."""
    linux = by_name(env.provider.instance_types())
    assert linux["c5.xlarge"].capacity["vpc.amazonaws.com/pod-eni"] == 18_000
    assert "vpc.amazonaws.com/pod-eni" not in linux["t3.micro"].capacity
    assert "vpc.amazonaws.com/PrivateIPv4Address" not in linux["m5.large"].capacity
    windows = by_name(
        env.provider.instance_types(
            make_nodeclass.build(amiSelectorTerms=[{"alias": "windows2022@latest"}])
        )
    )
    assert windows["m5.large"].capacity["vpc.amazonaws.com/PrivateIPv4Address"] == 9_000
    assert windows["c5.xlarge"].capacity["vpc.amazonaws.com/PrivateIPv4Address"] == 14_000


def test_kubelet_settings_change_pods_and_overhead(env: Any, make_nodeclass: Any) -> None:
    nc = make_nodeclass.build(
        kubelet={
            "maxPods": 110,
            "podsPerCore": 4,
            "systemReserved": {"cpu": "100m", "memory": "100Mi"},
            "evictionHard": {"memory.available": "5%"},
        },
        blockDeviceMappings=[
            {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "100Gi"}}
        ],
    )
    m5 = by_name(env.provider.instance_types(nc))["m5.large"]
    assert render(m5.capacity)["pods"] == "8"  # min(110, 4 per core x 2)
    assert render(m5.capacity)["ephemeral-storage"] == "100Gi"
    # memory: kube-reserved from the ENI-limited 29 pods, as nodeadm reserves it on an AL2023
    # node whatever maxPods says: 11 x 29 + 255 = 574Mi, + 100Mi system + 5% of 7577Mi
    eviction = math.ceil(7577 * 2**20 * 5 / 100) * 1000
    assert m5.overhead["memory"] == 574 * MI + 100 * MI + eviction
    assert render(m5.overhead)["cpu"] == "170m"


@pytest.mark.parametrize("family", ["al2023@latest", "custom"])
def test_max_pods_never_shrinks_the_memory_the_node_reserves(
    env: Any, make_nodeclass: Any, family: str
) -> None:
    """nodeadm reserves 11 MiB x the ENI-limited pod count + 255 MiB whatever maxPods says:
    m5.24xlarge (737 ENI pods) keeps 8,362 MiB + 100 MiB eviction with maxPods 110, so its
    allocatable is the same as without maxPods (363,724 - 8,462 = 355,262 MiB)."""
    terms: dict[str, object] = (
        {"amiSelectorTerms": [{"alias": family}]}
        if family != "custom"
        else {"amiFamily": "Custom", "amiSelectorTerms": [{"tags": {"any": "*"}}]}
    )
    nc = make_nodeclass.build(kubelet={"maxPods": 110}, **terms)
    big = by_name(env.provider.instance_types(nc))["m5.24xlarge"]
    assert render(big.capacity)["pods"] == "110"
    assert render(big.capacity)["memory"] == "363724Mi"
    assert big.overhead["memory"] == (11 * 737 + 255 + 100) * MI
    assert render(big.allocatable)["memory"] == "355262Mi"


def test_subnet_zones_gate_availability_and_ice(env: Any, session_catalog: Any) -> None:
    unavailable = UnavailableOfferings(180, env.clock)
    unavailable.mark_unavailable("spot", "m5.large", "us-east-1b")
    opts = CatalogOptions(
        region="us-east-1",
        family=FAMILIES["AL2023"],
        subnet_zones=frozenset({"us-east-1a", "us-east-1b"}),
    )
    m5 = by_name(build_catalog(session_catalog.raw, env.provider.pricing, unavailable, opts))[
        "m5.large"
    ]
    available = {(o.zone, o.capacity_type) for o in m5.offerings if o.available}
    assert available == {
        ("us-east-1a", "on-demand"),
        ("us-east-1a", "spot"),
        ("us-east-1b", "on-demand"),
    }
    env.clock.advance(181)
    assert not unavailable.is_unavailable("spot", "m5.large", "us-east-1b")


def test_catalog_round_trips_through_the_file_format(env: Any) -> None:
    types = [t for t in env.provider.instance_types() if t.name.startswith(("m5.", "g4dn."))]
    doc = dump_catalog(types)
    again = by_name(load_catalog(doc))
    for t in types:
        assert again[t.name].allocatable == t.allocatable
        assert again[t.name].offerings == t.offerings


def test_one_fetch_at_a_time_and_stale_while_refreshing(
    env: Any, session_catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Callers arriving during a fetch wait for it rather than fetching again; an expired
    catalog is served at once while a single background fetch replaces it."""
    fetches: list[float] = []
    gate = threading.Event()

    def slow_fetch(ec2: Any) -> Any:
        fetches.append(time.monotonic())
        assert gate.wait(10)
        return session_catalog.raw

    monkeypatch.setattr(catalog_module, "fetch_raw_catalog", slow_fetch)
    monkeypatch.setattr(env.provider.pricing, "refresh", lambda: None)
    provider = InstanceTypeProvider(
        env.clients.ec2,
        env.settings,
        env.provider.pricing,
        UnavailableOfferings(180, env.clock),
        clock=env.clock,
    )
    with ThreadPoolExecutor(3) as pool:
        waiting = [pool.submit(provider.raw) for _ in range(3)]
        time.sleep(0.3)
        assert not any(f.done() for f in waiting)
        gate.set()
        assert all(f.result(10) is session_catalog.raw for f in waiting)
    assert len(fetches) == 1

    gate.clear()
    env.clock.advance(RAW_CATALOG_TTL_SECONDS + 1)
    assert provider.raw() is session_catalog.raw  # at once: the gate is still closed
    assert provider.raw() is session_catalog.raw
    deadline = time.monotonic() + 5
    while len(fetches) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(fetches) == 2  # one background fetch for both calls
    gate.set()
    while provider._fetching.locked() and time.monotonic() < deadline:
        time.sleep(0.05)
    provider.raw()
    assert len(fetches) == 2  # fresh again


def test_types_that_cannot_serve_the_nodeclass_are_left_out(env: Any, make_nodeclass: Any) -> None:
    """Karpenter's compatibility checks, judged against DescribeInstanceTypes' own answer:
    nested virtualization needs the processor feature, connection-tracking timeouts a Nitro
    type, and AL2023 has no a1 (first Graviton) image."""
    infos = {str(i["InstanceType"]): i for i in env.provider.catalog.raw().infos}
    plain = set(by_name(env.provider.instance_types()))
    assert not any(n.startswith("a1.") for n in plain)  # AL2023, the default
    al2 = set(
        by_name(
            env.provider.instance_types(
                make_nodeclass.build(amiSelectorTerms=[{"alias": "al2@latest"}])
            )
        )
    )
    assert any(n.startswith("a1.") for n in al2)
    nested = set(
        by_name(
            env.provider.instance_types(
                make_nodeclass.build(cpuOptions={"nestedVirtualization": "enabled"})
            )
        )
    )
    offers = {
        n
        for n in plain
        if "nested-virtualization" in infos[n]["ProcessorInfo"].get("SupportedFeatures", [])
    }
    assert nested == offers and nested
    disabled = make_nodeclass.build(cpuOptions={"nestedVirtualization": "disabled"})
    assert set(by_name(env.provider.instance_types(disabled))) == plain
    tracked = set(
        by_name(
            env.provider.instance_types(
                make_nodeclass.build(connectionTracking={"tcpEstablishedTimeout": 3600})
            )
        )
    )
    assert tracked == {n for n in plain if infos[n].get("Hypervisor") == "nitro"}
    assert tracked != plain  # the xen types are gone
