"""The emulated cloud the activity and worker tests share (the ``cloud`` fixture's value)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from activities.ec2.catalog import RawCatalog
from activities.ec2.clients import AWSClients
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from sandbox import fleet_checks
from sandbox.ec2.emulation import Emulation
from sandbox.ec2.server import MotoServer

REGION = "us-east-1"
CLUSTER = "wf-cluster"


@dataclass
class Cloud:
    server: MotoServer
    emulation: Emulation
    clients: AWSClients
    provider: EC2Provider
    raw: RawCatalog
    prices: tuple[dict[str, float], dict[tuple[str, str], float], str]

    def fresh_provider(self) -> EC2Provider:
        """Another provider on the same emulated account (a restarted worker's view)."""
        provider = EC2Provider.create(
            ProviderSettings(REGION, ClusterInfo(CLUSTER, "https://k8s.example", "Q0E=")),
            AWSClients.create(REGION, self.server.endpoint_url, self.server.session()),
        )
        provider.catalog.use_raw(self.raw)
        provider.pricing.load(*self.prices)
        return provider

    def instances_of(self, nodeclaim: str) -> list[str]:
        """Ids of live instances tagged with ``nodeclaim``."""
        return [
            str(i["InstanceId"])
            for i in self.live_instances()
            if {"Key": "karpenter.sh/nodeclaim", "Value": nodeclaim} in i.get("Tags", [])
        ]

    def live_instances(self) -> list[dict[str, Any]]:
        return [
            i
            for i in fleet_checks.every_instance(self.clients.ec2)
            if i["State"]["Name"] not in fleet_checks.GONE
        ]
