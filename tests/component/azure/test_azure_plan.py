"""`joinery plan --catalog` on a catalog the Azure writer produced from the emulator: the
usual plan checks (each placed pod fits its claim's cheapest type, the price is that type's
cheapest offering, the pool's requirements hold) on AKSNodeClass pools."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from azure.mgmt.compute import ComputeManagementClient

from activities.azure.catalog import region_catalog, write_catalog
from activities.azure.params import CatalogParams
from activities.azure.pricing import RETAIL_API, AzurePricing, url_fetcher
from models.quantity import parse_quantity
from worker.cli import main

NODECLASS = {
    "apiVersion": "karpenter.azure.com/v1beta1",
    "kind": "AKSNodeClass",
    "metadata": {"name": "default"},
    "spec": {"imageFamily": "Ubuntu2204"},
}


def _pool(requirements: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.azure.com",
                        "kind": "AKSNodeClass",
                        "name": "default",
                    },
                    "requirements": requirements,
                }
            }
        },
    }


def _pod(name: str, requests: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}],
            **spec,
        },
    }


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Azure catalog of southcentralus, written once for the module."""
    from activities.azure.clients import compute_client
    from sandbox.azure.credential import FakeCredential
    from sandbox.azure.server import start_server

    server = start_server(certs_dir=tmp_path_factory.mktemp("azure-plan-certs"))
    try:
        compute: ComputeManagementClient = compute_client(
            "sub", endpoint=server.endpoint, credential=FakeCredential(), ca_file=server.ca_file
        )
        pricing = AzurePricing(
            "southcentralus", fetch=url_fetcher(server.ca_file), endpoint=server.retail_prices_url
        )
        types = region_catalog(compute, "southcentralus", pricing, CatalogParams())
        assert pricing.source == RETAIL_API
    finally:
        server.stop()
    path = tmp_path_factory.mktemp("azure-plan") / "catalog.yaml"
    write_catalog(path, types)
    return path


SCENARIOS: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("small-pod", [], [_pod("a", {"cpu": "500m", "memory": "512Mi"})]),
    (
        "d-family-only",
        [{"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["D"]}],
        [_pod(f"w{i}", {"cpu": "1", "memory": "2Gi"}) for i in range(5)],
    ),
    (
        "on-demand-arm64",
        [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
        [_pod("arm", {"cpu": "2", "memory": "4Gi"})],
    ),
    (
        "gpu-pod",
        [],
        [
            {
                **_pod("train", {"cpu": "4"}),
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "x",
                            "resources": {
                                "requests": {"cpu": "4", "memory": "16Gi"},
                                "limits": {"nvidia.com/gpu": "1"},
                            },
                        }
                    ]
                },
            }
        ],
    ),
    (
        "zonal-v5-or-newer",
        [
            {"key": "karpenter.azure.com/sku-version", "operator": "Gt", "values": ["4"]},
            {
                "key": "topology.kubernetes.io/zone",
                "operator": "In",
                "values": ["southcentralus-2"],
            },
        ],
        [_pod(f"z{i}", {"cpu": "3", "memory": "6Gi"}) for i in range(3)],
    ),
    (
        "selects-by-sku-memory",
        [{"key": "karpenter.azure.com/sku-memory", "operator": "Gt", "values": ["16000"]}],
        [_pod("m", {"cpu": "1", "memory": "1Gi"})],
    ),
    (
        "spot-only",
        [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
        [_pod(f"s{i}", {"cpu": "1500m", "memory": "3Gi"}) for i in range(4)],
    ),
    (
        "four-or-eight-vcpus",
        [{"key": "karpenter.azure.com/sku-cpu", "operator": "In", "values": ["4", "8"]}],
        [_pod(f"c{i}", {"cpu": "1", "memory": "1Gi"}) for i in range(6)],
    ),
    (
        "fewer-than-four-vcpus",
        [{"key": "karpenter.azure.com/sku-cpu", "operator": "Lt", "values": ["4"]}],
        [_pod(f"l{i}", {"cpu": "700m", "memory": "1Gi"}) for i in range(5)],
    ),
    (
        "accelerated-and-premium",
        [
            {
                "key": "karpenter.azure.com/sku-networking-accelerated",
                "operator": "In",
                "values": ["true"],
            },
            {
                "key": "karpenter.azure.com/sku-storage-premium-capable",
                "operator": "In",
                "values": ["true"],
            },
        ],
        [_pod("p", {"cpu": "2", "memory": "4Gi"})],
    ),
    (
        "hyperv-gen2",
        [{"key": "karpenter.azure.com/sku-hyperv-generation", "operator": "In", "values": ["2"]}],
        [_pod("g2", {"cpu": "1", "memory": "2Gi"})],
    ),
    (
        "no-gpu-no-burstable-big-pod",
        [{"key": "karpenter.azure.com/sku-family", "operator": "NotIn", "values": ["N", "B"]}],
        [_pod("big", {"cpu": "10", "memory": "20Gi"})],
    ),
    (
        "one-series",
        [{"key": "karpenter.azure.com/sku-series", "operator": "In", "values": ["Ds_v3"]}],
        [_pod(f"d{i}", {"cpu": "1", "memory": "2Gi"}) for i in range(3)],
    ),
    (
        "pod-selects-e-family",
        [],
        [
            _pod(
                "e",
                {"cpu": "1", "memory": "8Gi"},
                nodeSelector={"karpenter.azure.com/sku-family": "E"},
            )
        ],
    ),
    (
        "pod-selects-os-sku",
        [],
        [
            _pod(
                "u",
                {"cpu": "1", "memory": "1Gi"},
                nodeSelector={"kubernetes.azure.com/os-sku": "Ubuntu"},
            )
        ],
    ),
    (
        "ephemeral-os-capable",
        [{"key": "karpenter.azure.com/sku-storage-ephemeralos-maxsize", "operator": "Exists"}],
        [_pod("eph", {"cpu": "1", "memory": "2Gi"})],
    ),
    (
        "t4-gpus",
        [
            {
                "key": "karpenter.azure.com/sku-gpu-manufacturer",
                "operator": "In",
                "values": ["nvidia"],
            },
            {"key": "karpenter.azure.com/sku-gpu-name", "operator": "In", "values": ["T4"]},
        ],
        [_pod("t4", {"cpu": "2", "memory": "8Gi"})],
    ),
    (
        "memory-heavy",
        [],
        [_pod("heavy", {"cpu": "4", "memory": "100Gi"})],
    ),
    (
        "many-small-pods",
        [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
        [_pod(f"tiny{i}", {"cpu": "250m", "memory": "256Mi"}) for i in range(30)],
    ),
    (
        "hostname-anti-affinity",
        [],
        [
            {
                **_pod(f"solo{i}", {"cpu": "500m", "memory": "1Gi"}),
                "metadata": {"name": f"solo{i}", "namespace": "default", "labels": {"app": "solo"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "x",
                            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                        }
                    ],
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "topologyKey": "kubernetes.io/hostname",
                                    "labelSelector": {"matchLabels": {"app": "solo"}},
                                }
                            ]
                        }
                    },
                },
            }
            for i in range(4)
        ],
    ),
    (
        "zone-spread",
        [],
        [
            {
                **_pod(f"spread{i}", {"cpu": "1", "memory": "1Gi"}),
                "metadata": {
                    "name": f"spread{i}",
                    "namespace": "default",
                    "labels": {"app": "spread"},
                },
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "x",
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                        }
                    ],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "spread"}},
                        }
                    ],
                },
            }
            for i in range(4)
        ],
    ),
    (
        "arm64-pod-selector",
        [],
        [
            _pod(
                "arm-sel",
                {"cpu": "2", "memory": "4Gi"},
                nodeSelector={"kubernetes.io/arch": "arm64"},
            )
        ],
    ),
]


def _plan(tmp_path: Path, catalog: Path, docs: list[dict[str, Any]]) -> dict[str, Any]:
    inputs = tmp_path / "inputs.yaml"
    inputs.write_text(yaml.safe_dump_all(docs))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["plan", "-f", str(inputs), "--catalog", str(catalog), "-o", "json"])
    assert code == 0
    plan: dict[str, Any] = json.loads(buf.getvalue())
    return plan


def _satisfies(labels: dict[str, list[str]], req: dict[str, Any]) -> bool:
    values = labels.get(req["key"])
    op = req["operator"]
    if op == "In":
        return values is not None and bool(set(values) & set(req["values"]))
    if op == "NotIn":
        return values is None or not set(values) & set(req["values"])
    if op == "Gt":
        return values is not None and all(int(v) > int(req["values"][0]) for v in values)
    if op == "Lt":
        return values is not None and all(int(v) < int(req["values"][0]) for v in values)
    if op == "Exists":
        return values is not None
    if op == "DoesNotExist":
        return values is None
    raise AssertionError(op)


@pytest.mark.parametrize(("name", "requirements", "pods"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_plan_on_the_azure_catalog(
    name: str,
    requirements: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    catalog_file: Path,
    tmp_path: Path,
) -> None:
    plan = _plan(tmp_path, catalog_file, [_pool(requirements), NODECLASS, *pods])
    check_plan(name, requirements, pods, plan, catalog_file)


def check_plan(
    name: str,
    requirements: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    plan: dict[str, Any],
    catalog_file: Path,
) -> None:
    """The usual plan checks, on the catalog file the plan was made from: every pod placed,
    each claim's price its cheapest offering, its types meeting the pool's and pods'
    requirements, and its pods fitting the cheapest type's allocatable."""
    assert plan["unschedulable"] == [], plan["unschedulable"]
    catalog = {e["name"]: e for e in yaml.safe_load(catalog_file.read_text())["instanceTypes"]}
    assert len(pods) and len(plan["nodeClaims"]) >= 1
    placed = [p for claim in plan["nodeClaims"] for p in claim["pods"]]
    assert sorted(placed) == sorted(f"default/{p['metadata']['name']}" for p in pods)
    by_name = {f"default/{p['metadata']['name']}": p for p in pods}
    for claim in plan["nodeClaims"]:
        zones = set(claim["zones"])
        cts = set(claim["capacityTypes"])
        cheapest = min(
            (o["price"], t)
            for t in claim["instanceTypes"]
            for o in catalog[t]["offerings"]
            if o.get("available", True) and o["zone"] in zones and o["capacityType"] in cts
        )
        assert claim["price"] == pytest.approx(cheapest[0])
        entry = catalog[cheapest[1]]
        # Every type of the claim meets the pool's requirements (from its catalog labels).
        for t in claim["instanceTypes"]:
            labels = {r["key"]: r.get("values") for r in catalog[t].get("requirements", [])}
            labels = {k: v for k, v in labels.items() if v}
            labels["topology.kubernetes.io/zone"] = [o["zone"] for o in catalog[t]["offerings"]]
            labels["karpenter.sh/capacity-type"] = [
                o["capacityType"] for o in catalog[t]["offerings"] if o.get("available", True)
            ]
            for req in requirements:
                assert _satisfies(labels, req), (t, req)
            for p in claim["pods"]:
                for key, value in by_name[p]["spec"].get("nodeSelector", {}).items():
                    assert _satisfies(labels, {"key": key, "operator": "In", "values": [value]})
        if name == "hostname-anti-affinity":
            assert len(claim["pods"]) == 1
        # The pods fit the cheapest type's allocatable.
        assert len(claim["pods"]) <= parse_quantity(entry["capacity"]["pods"]) // 1000
        for resource in ("cpu", "memory", "nvidia.com/gpu"):
            need = 0
            for p in claim["pods"]:
                res = by_name[p]["spec"]["containers"][0]["resources"]
                amount = res.get("requests", {}).get(resource) or res.get("limits", {}).get(
                    resource
                )
                need += parse_quantity(amount) if amount else 0
            if not need:
                continue
            capacity = parse_quantity(entry["capacity"].get(resource, 0))
            overhead = parse_quantity(entry.get("overhead", {}).get(resource, 0))
            assert need <= capacity - overhead, (name, resource, cheapest)
