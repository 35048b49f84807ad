"""The cloud seam (issue 31): callers reach a cloud only through ``activities/cloud/``.

The import rule is checked by ``scripts/layers.py`` (its ``seam_offences``): the repository
holds no boto3, botocore or EC2-provider import outside ``activities/ec2/`` and the short
``EC2_ONLY`` list, and a tree that breaks the rule is reported line by line. The rest pins
what the seam promises: EC2's errors are the neutral ones under their own names, the
registry builds the provider ``--provider`` names, Azure answers the catalog and refuses
what needs VMs naming the issue, and the worker refuses ``--provider azure`` in one line.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from azure.mgmt.compute.models import ResourceSku
from botocore.exceptions import ClientError

from activities.azure.images import ImageResolver
from activities.azure.nodeclasses import AKSNodeClassResolver
from activities.azure.pricing import AzurePricing
from activities.azure.provider import AzureProvider, provider_id, vm_id
from activities.azure.skus import Sku
from activities.cloud import errors, registry
from activities.cloud.kinds import AKS_NODECLASS, EC2_NODECLASS
from activities.cloud.launch import LaunchRequest
from activities.cloud.options import ProviderOptions
from activities.ec2 import errors as ec2_errors
from activities.ec2.provider import EC2Provider
from models.aksnodeclass import AKSNodeClass
from worker.cli.command import main
from worker.running.app import provider_options, refusal
from worker.running.settings import Settings, TemporalSettings

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "layers.py"


def _layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layers_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_repository_reaches_ec2_only_through_the_seam() -> None:
    assert _layers().seam_offences(ROOT) == []


def test_an_ec2_import_outside_the_provider_is_one_line_each(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            # violations: direct, lazy, TYPE_CHECKING-only, ``from activities import ec2``
            "activities/planning/plan.py": "import boto3\nfrom activities.cloud import x\n",
            "worker/running/app.py": (
                "def build() -> None:\n    from activities.ec2.provider import EC2Provider\n"
            ),
            "activities/deps.py": (
                "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                "    from botocore.exceptions import ClientError\n"
            ),
            "benchmarks/bench.py": "from activities import ec2\n",
            # allowed: the provider, the registry, the emulation, an AWS-only command
            "activities/ec2/fleet.py": "import boto3\nfrom activities.ec2 import errors\n",
            "activities/cloud/registry.py": "from activities.ec2.provider import EC2Provider\n",
            "sandbox/ec2/server.py": "import boto3\n",
            "worker/cli/doctor_command.py": "from botocore.exceptions import ClientError\n",
            # not EC2: a name that only starts alike
            "activities/status/x.py": "import activities.ec2nodeclass_notes\nimport boto\n",
        },
    )
    found = _layers().seam_offences(root)
    assert [line.split(" (")[0] for line in found] == [
        "activities/deps.py:4: activities.deps imports botocore.exceptions",
        "activities/planning/plan.py:1: activities.planning.plan imports boto3",
        "worker/running/app.py:2: worker.running.app imports activities.ec2.provider",
        "benchmarks/bench.py:1: benchmarks.bench imports activities.ec2",
    ]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and len(done.stdout.splitlines()) == 4


def _client_error(code: str, status: int = 400) -> ClientError:
    body: Any = {
        "Error": {"Code": code, "Message": "m"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(body, "CreateFleet")


@pytest.mark.parametrize(
    ("code", "status", "neutral", "name", "retryable"),
    [
        ("RequestLimitExceeded", 400, errors.Throttled, "Throttled", True),
        ("InternalError", 500, errors.TransientError, "TransientError", True),
        (
            "InsufficientInstanceCapacity",
            400,
            errors.InsufficientCapacity,
            "InsufficientCapacity",
            False,
        ),
        ("InvalidInstanceID.NotFound", 400, errors.InstanceNotFound, "InstanceNotFound", False),
        ("InvalidParameterValue", 400, errors.LaunchFailed, "LaunchFailed", False),
    ],
)
def test_ec2_errors_are_the_neutral_ones_under_their_own_names(
    code: str, status: int, neutral: type[errors.CloudError], name: str, retryable: bool
) -> None:
    err = ec2_errors.classify(_client_error(code, status))
    assert isinstance(err, neutral) and isinstance(err, errors.CloudError)
    assert type(err).__name__ == name and err.retryable is retryable and err.code == code


def test_a_refused_spot_role_warns_the_pool_and_names_the_fix() -> None:
    refused = ec2_errors.classify(_client_error(ec2_errors.SPOT_SERVICE_LINKED_ROLE_CODE))
    assert isinstance(refused, errors.InsufficientCapacity)
    assert refused.reason == "SpotSLRCreationFailed"
    assert refused.warning is not None and "create-service-linked-role" in refused.warning.message
    plain = ec2_errors.classify(_client_error("InsufficientInstanceCapacity"))
    assert isinstance(plain, errors.InsufficientCapacity)
    assert (plain.reason, plain.warning) == ("InsufficientCapacity", None)
    not_ready = ec2_errors.NodeClassNotReady("no subnet")
    assert isinstance(not_ready, errors.NodeClassNotReady) and not not_ready.retryable


def test_the_registry_builds_the_provider_the_setting_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    aws = registry.build(ProviderOptions(region="us-east-1", cluster="c"))
    assert isinstance(aws, EC2Provider) and aws.name == "aws"
    assert aws.nodeclass_kind is EC2_NODECLASS
    assert aws.instance_id(aws.provider_id("us-east-1a", "i-0abc")) == "i-0abc"
    assert aws.instance_id("azure:///subscriptions/s/x/virtualMachines/v") == ""
    with pytest.raises(registry.UnknownProvider, match="one of aws, azure"):
        registry.build(ProviderOptions(provider="gcp"))
    with pytest.raises(ValueError, match="AZURE_SUBSCRIPTION_ID"):
        registry.build(ProviderOptions(provider="azure", region="eastus"))


def _sku(name: str, **caps: str) -> Sku:
    base = {
        "vCPUs": "4",
        "MemoryGB": "16",
        "CpuArchitectureType": "x64",
        "HyperVGenerations": "V1,V2",
    }
    base.update(LowPriorityCapable="True", **caps)
    item: dict[str, Any] = {
        "resourceType": "virtualMachines",
        "name": name,
        "size": name.removeprefix("Standard_"),
        "family": "f",
        "locations": ["eastus"],
        "locationInfo": [{"location": "eastus", "zones": ["1", "2"]}],
        "capabilities": [{"name": k, "value": v} for k, v in base.items()],
        "restrictions": [],
    }
    return Sku.from_sdk(ResourceSku(item), "eastus")


def _azure() -> AzureProvider:
    provider = AzureProvider("eastus", compute=None, pricing=AzurePricing("eastus"))
    provider.adopt_catalog_snapshot([_sku("Standard_D4s_v5"), _sku("Standard_D2s_v5")])
    return provider


def test_azure_without_vms_serves_its_catalog_and_refuses_what_needs_vms() -> None:
    """A provider built for plan-type use (no node resource group) has no VMs."""
    azure = _azure()
    assert azure.nodeclass_kind is AKS_NODECLASS
    types = {t.name: t for t in azure.instance_types()}
    assert sorted(types) == ["Standard_D2s_v5", "Standard_D4s_v5"]
    d4 = types["Standard_D4s_v5"]
    assert d4.capacity["cpu"] == 4000
    assert {o.capacity_type for o in d4.offerings} == {"on-demand", "spot"}
    nodeclass = AKSNodeClass.model_validate({"metadata": {"name": "default"}})
    request = LaunchRequest("claim", "uid", "pool", "default")
    calls = [
        lambda: azure.launch(request, nodeclass),
        lambda: azure.get("vm"),
        lambda: azure.list_owned(),
        lambda: azure.delete("vm"),
    ]
    for call in calls:
        with pytest.raises(errors.NotImplementedOnProvider, match=r"no node resource group") as err:
            call()
        assert not err.value.retryable
    assert azure.interruption_source() is None
    assert azure.garbage_collect() == {}


class _Versions:
    """Community gallery versions: one published version of every definition."""

    def list(self, location: str, gallery: str, definition: str) -> list[Any]:
        when = datetime(2026, 1, 1, tzinfo=UTC)
        props = SimpleNamespace(published_date=when, exclude_from_latest=False)
        return [SimpleNamespace(name="202601.01.0", properties=props)]


def test_azure_node_class_readiness_and_provider_ids() -> None:
    azure = _azure()
    plain = AKSNodeClass.model_validate({"metadata": {"name": "a"}})
    # no Kubernetes version known: no image can be chosen
    assert "Kubernetes version is not known" in (azure.nodeclass_not_ready(plain) or "")
    compute: Any = type("Compute", (), {"community_gallery_image_versions": _Versions()})()
    subnet = (
        "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v"
        "/subnets/nodes"
    )
    azure.nodeclasses = AKSNodeClassResolver(
        ImageResolver(compute, "eastus"), lambda: "1.33.2", cluster_subnet_id=subnet
    )
    assert azure.nodeclass_not_ready(plain) is None
    got = {c.type: c.status for c in azure.nodeclass_status(plain).conditions}
    assert got["ValidationSucceeded"] == got["ImagesReady"] == got["SubnetsReady"] == "True"
    streaming = AKSNodeClass.model_validate(
        {"metadata": {"name": "b"}, "spec": {"artifactStreaming": {"enabled": True}}}
    )
    assert "spec.artifactStreaming" in (azure.nodeclass_not_ready(streaming) or "")
    vm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-1"
    assert azure.instance_id(provider_id(vm)) == vm == vm_id(f"azure://{vm}")
    assert azure.instance_id("aws:///us-east-1a/i-0abc") == ""


def _worker_refusal(argv: list[str]) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["worker", *argv])
    assert code == 2
    [line] = err.getvalue().splitlines()
    return line


def test_the_worker_on_azure_needs_where_its_vms_go(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_SUBSCRIPTION_ID", "AZURE_NODE_RESOURCE_GROUP"):
        monkeypatch.delenv(name, raising=False)
    line = _worker_refusal(["--provider", "azure"])
    assert line == (
        "joinery worker: --provider azure: AZURE_SUBSCRIPTION_ID and "
        "AZURE_NODE_RESOURCE_GROUP must be set (where its VMs go)"
    )
    monkeypatch.setenv("JOINERY_PROVIDER", "azure")
    assert _worker_refusal([]) == line
    monkeypatch.setenv("AZURE_SUBSCRIPTION_ID", "sub")
    monkeypatch.setenv("AZURE_NODE_RESOURCE_GROUP", "MC_rg_c_eastus")
    monkeypatch.setenv("NODE_IDENTITIES", "/id/a, /id/b")
    assert refusal("azure") is None
    settings = Settings(TemporalSettings(), provider="azure", region="eastus")
    opts = provider_options(settings)
    assert (opts.subscription_id, opts.node_resource_group) == ("sub", "MC_rg_c_eastus")
    assert opts.node_identities == ("/id/a", "/id/b")
    monkeypatch.setenv("JOINERY_PROVIDER", "gcp")
    assert _worker_refusal([]) == (
        "joinery worker: --provider 'gcp' (or JOINERY_PROVIDER): one of aws, azure"
    )


def test_drift_facts_change_with_what_nodes_drift_on_not_with_conditions() -> None:
    def body(generation: int, images: list[str], reason: str) -> dict[str, Any]:
        return {
            "metadata": {"generation": generation},
            "status": {
                "images": [{"id": i} for i in images],
                "conditions": [{"type": "Ready", "status": "True", "reason": reason}],
            },
        }

    first = AKS_NODECLASS.drift_facts(body(1, ["img-1"], "a"))
    assert AKS_NODECLASS.drift_facts(body(1, ["img-1"], "b")) == first
    assert AKS_NODECLASS.drift_facts(body(1, ["img-2"], "a")) != first
    assert AKS_NODECLASS.drift_facts(body(2, ["img-1"], "a")) != first
