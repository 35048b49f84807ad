"""`joinery doctor --provider azure` against the emulator: everything there passes; each
fault (a missing subnet or resource group, an unregistered provider, no quota left, no such
subscription) is one failing line naming what is wrong, exit 1; bad input exit 2."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
import yaml

from activities.azure.clients import TOKEN_ENV
from sandbox.azure.server import AzureServer
from tests.component.azure.conftest import SUBSCRIPTION
from tests.support.azure_skus import expected_names, seed_items
from worker.cli import main

REGION = "eastus"
GROUP = "MC_rg_cluster_eastus"
SUBNET = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-net/providers/Microsoft.Network"
    "/virtualNetworks/vnet/subnets/nodes"
)
OTHER_SUBNET = SUBNET.replace("/nodes", "/pods")


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "emulator-token")


@pytest.fixture
def seeded(azure: AzureServer) -> AzureServer:
    azure.emulator.arm.add_resource_group(SUBSCRIPTION, GROUP, REGION)
    azure.emulator.arm.add_subnet(SUBNET, "10.224.0.0/16")
    azure.emulator.arm.add_subnet(OTHER_SUBNET, "10.225.0.0/16")
    return azure


@pytest.fixture
def nodeclass(tmp_path: Path) -> Path:
    path = tmp_path / "aks.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "karpenter.azure.com/v1beta1",
                "kind": "AKSNodeClass",
                "metadata": {"name": "default"},
                "spec": {"vnetSubnetID": SUBNET},
            }
        )
    )
    return path


def _doctor(azure: AzureServer, *extra: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    args = [
        "doctor",
        "--provider",
        "azure",
        "--region",
        REGION,
        "--endpoint",
        azure.endpoint,
        "--ca-file",
        azure.ca_file,
        "--subscription-id",
        SUBSCRIPTION,
        "--node-resource-group",
        GROUP,
        *extra,
    ]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue().splitlines(), err.getvalue()


def _missing(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("missing")]


def test_everything_readable_passes(seeded: AzureServer, nodeclass: Path) -> None:
    code, lines, err = _doctor(seeded, "-f", str(nodeclass), "--subnet-id", OTHER_SUBNET)
    assert code == 0 and err == "", lines
    assert all(line.startswith("ok ") for line in lines), lines
    text = "\n".join(lines)
    assert f"subscription {SUBSCRIPTION}: Microsoft.Compute and Microsoft.Network" in text
    assert f"resource group {GROUP}: in {REGION}, Succeeded" in text
    assert f"subnet {SUBNET}: 10.224.0.0/16, Succeeded" in text
    assert f"subnet {OTHER_SUBNET}: 10.225.0.0/16, Succeeded" in text
    listed = len([s for s in seed_items() if REGION in s["locations"]])
    usable = len(expected_names(REGION))
    assert f"{usable} of {listed} SKUs usable for AKSNodeClass default" in text
    assert "vCPU quota in eastus: 100 regional vCPUs left" in text
    # Reads only: every request the doctor made was a GET.
    assert {m for m, _ in seeded.emulator.requests} == {"GET"}


def test_missing_subnet_is_one_failing_line(seeded: AzureServer, nodeclass: Path) -> None:
    seeded.emulator.arm.remove_subnet(SUBNET)
    code, lines, _ = _doctor(seeded, "-f", str(nodeclass))
    assert code == 1
    (line,) = _missing(lines)
    assert line.startswith(f"missing   subnet {SUBNET}: does not exist (NotFound)"), line


def test_missing_resource_group(azure: AzureServer) -> None:
    code, lines, _ = _doctor(azure)
    assert code == 1
    (line,) = _missing(lines)
    assert f"resource group {GROUP}" in line and "ResourceGroupNotFound" in line


def test_no_subnet_given_is_unchecked_not_failing(seeded: AzureServer) -> None:
    code, lines, _ = _doctor(seeded)
    assert code == 0
    assert any(line.startswith("unchecked subnet: none given") for line in lines), lines


def test_unregistered_network_provider(seeded: AzureServer) -> None:
    seeded.emulator.arm.unregister("Microsoft.Network")
    code, lines, _ = _doctor(seeded)
    assert code == 1
    (line,) = _missing(lines)
    assert "Microsoft.Network is NotRegistered" in line


def test_quota_exhausted_and_full_families(seeded: AzureServer) -> None:
    arm = seeded.emulator.arm
    arm.set_usage(REGION, "standardDSv3Family", 100, 100)
    code, lines, _ = _doctor(seeded)
    assert code == 0
    assert any("families at their limit: standardDSv3Family" in line for line in lines), lines
    arm.set_usage(REGION, "cores", 99, 100)
    code, lines, _ = _doctor(seeded)
    assert code == 1
    (line,) = _missing(lines)
    assert "1 regional vCPUs left, the smallest size needs 2" in line


def test_every_family_full_fails(seeded: AzureServer) -> None:
    for item in seed_items():
        if REGION in item["locations"]:
            seeded.emulator.arm.set_usage(REGION, item["family"], 10, 10)
    code, lines, _ = _doctor(seeded)
    assert code == 1
    (line,) = _missing(lines)
    assert "no VM family has room" in line


def test_unknown_subscription_fails_every_read_without_a_traceback(seeded: AzureServer) -> None:
    seeded.emulator.faults.fail(
        "/subscriptions/",
        404,
        "SubscriptionNotFound",
        f"The subscription '{SUBSCRIPTION}' could not be found.",
        times=100,
    )
    code, lines, err = _doctor(seeded, "--subnet-id", SUBNET)
    assert code == 1 and "Traceback" not in err
    missing = _missing(lines)
    assert len(missing) == 5 and all("SubscriptionNotFound" in line for line in missing), lines


def test_bad_node_class_file_is_exit_2(azure: AzureServer, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\n"
        "metadata: {name: bad}\nspec: {vnetSubnetID: not-an-id}\n"
    )
    code, lines, err = _doctor(azure, "-f", str(bad))
    assert code == 2 and lines == []
    assert err.count("\n") == 1 and "spec.vnetSubnetID" in err and "AKSNodeClass bad" in err
