"""A cluster in China or GovCloud: the launch path and ``joinery doctor`` in that partition.

The emulator serves cn-north-1 and us-gov-west-1 as AWS does (ARNs in the partition, IAM
apart, another partition's ARN refused, the Pricing API only in cn-northwest-1 and in CNY:
sandbox/ec2/partition_*.py, sandbox/ec2/pricing_api.py). Every request Joinery sends is
recorded on the wire, so "no ``arn:aws:`` anywhere" is checked on what left the process.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from activities.ec2.clients import AWSClients
from activities.ec2.pricing import OFFLINE, PRICING_API
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from sandbox.ec2 import partition_guard
from sandbox.ec2.pricing_api import PricingApi
from sandbox.ec2.seed import seed_region
from sandbox.ec2.server import MotoServer
from tests.component.ec2.conftest import CLUSTER, nodeclass
from tests.support.ec2_launches import request
from worker.cli import main

ROLE = f"KarpenterNodeRole-{CLUSTER}"
QUEUE = f"{CLUSTER}-interruptions"
COMMERCIAL_ARN = "arn:aws:"


class Wire:
    """Every request body and URL the clients send (after signing, as it leaves)."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-send", self._record)

    def _record(self, request: Any, **_: Any) -> None:
        body = request.body or b""
        text = body.decode(errors="replace") if isinstance(body, bytes) else str(body)
        self.sent.append(f"{request.url} {text}")

    def commercial(self) -> list[str]:
        from urllib.parse import unquote_plus

        return [s for s in self.sent if COMMERCIAL_ARN in unquote_plus(s)]


@dataclass
class PartitionEnv:
    region: str
    part: str
    server: MotoServer
    clients: AWSClients
    provider: EC2Provider
    wire: Wire


@pytest.fixture(params=[("cn-north-1", "aws-cn"), ("us-gov-west-1", "aws-us-gov")])
def penv(request: Any, moto_server: MotoServer, emulation: Any) -> Iterator[PartitionEnv]:
    region, part = request.param
    moto_server.reset()
    emulation.reset()
    partition_guard.refused.clear()
    clients = AWSClients.create(region, moto_server.endpoint_url, moto_server.session())
    wire = Wire()
    for client in (clients.ec2, clients.ssm, clients.sqs, clients.eks, clients.iam):
        wire.attach(client)
    if clients.pricing is not None:
        PricingApi().attach(clients.pricing)
        wire.attach(clients.pricing)
    seed_region(clients.ec2, region, CLUSTER)
    clients.sqs.create_queue(QueueName=QUEUE)
    settings = ProviderSettings(
        region=region,
        cluster=ClusterInfo(CLUSTER, "https://k8s.example", "Q0E=", "10.100.0.0/16"),
        manage_instance_profiles=True,
    )
    provider = EC2Provider.create(settings, clients)
    yield PartitionEnv(region, part, moto_server, clients, provider, wire)


def test_the_launch_path_stays_in_the_partition(penv: PartitionEnv) -> None:
    penv.provider.load_catalog()
    # China's prices from cn-northwest-1's Pricing API; GovCloud has none: the table
    expected_source = PRICING_API if penv.part == "aws-cn" else OFFLINE
    assert penv.provider.pricing.on_demand_source == expected_source
    nc = nodeclass(role=ROLE)
    status = penv.provider.nodeclass_status(nc)
    assert all(c.status == "True" for c in status.conditions), status.conditions
    name = status.fields["instanceProfile"]
    profile = penv.clients.iam.get_instance_profile(InstanceProfileName=name)
    assert profile["InstanceProfile"]["Arn"].startswith(f"arn:{penv.part}:iam::")
    for capacity in ("on-demand", "spot"):
        result = penv.provider.launch(request(f"claim-{capacity}", capacity), nc)
        assert result.capacity_type == capacity
        described = penv.clients.ec2.describe_instances(InstanceIds=[result.instance_id])
        instance = described["Reservations"][0]["Instances"][0]
        assert instance["Placement"]["AvailabilityZone"].startswith(penv.region)
        assert instance["IamInstanceProfile"]["Arn"].startswith(f"arn:{penv.part}:iam::")
    templates = penv.clients.ec2.describe_launch_templates()["LaunchTemplates"]
    assert templates
    assert partition_guard.refused == []
    assert penv.wire.sent and penv.wire.commercial() == []


def test_doctor_passes_in_the_partition(
    penv: PartitionEnv, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nc.yaml"
    path.write_text(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\n"
        f"spec:\n  role: {ROLE}\n  amiSelectorTerms: [{{alias: al2023@latest}}]\n"
        f"  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: {CLUSTER}}}}}]\n"
        f"  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: {CLUSTER}}}}}]\n"
    )
    code = main(
        [
            "doctor",
            "--cluster",
            CLUSTER,
            "--region",
            penv.region,
            "--aws-endpoint-url",
            penv.server.endpoint_url,
            "--interruption-queue",
            QUEUE,
            "-f",
            str(path),
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, lines
    assert not [ln for ln in lines if ln.startswith("missing")]
    assert any(ln.startswith("ok") and "AWSServiceRoleForEC2Spot" in ln for ln in lines), lines
    assert not [ln for ln in lines if COMMERCIAL_ARN in ln]
    assert partition_guard.refused == []
