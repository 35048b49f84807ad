"""The Azure crash test's oracle (``tests.support.azure_writes``), checked against the
emulator: a VM created again under its own name is one VM; a second name for one claim is a
double; writes are told apart as launches (PUT) and terminations (DELETE)."""

from __future__ import annotations

from typing import Any

from sandbox.azure.server import AzureServer
from tests.component.azure.test_azure_vm_emulator import RG, make_nic, seeded, vm_body
from tests.support.azure_writes import ArmWrites

__all__ = ["seeded"]


def _vm(compute: Any, network: Any, name: str, claim: str) -> None:
    body = vm_body(make_nic(network, name))
    body["tags"]["karpenter.sh_nodeclaim"] = claim
    compute.virtual_machines.begin_create_or_update(RG, name, body).result()


def test_one_vm_per_claim_is_counted_at_the_emulator(
    seeded: AzureServer, compute: Any, network: Any
) -> None:
    writes = ArmWrites()
    inner = seeded.emulator.handle
    writes.observe(seeded.emulator)
    try:
        _vm(compute, network, "aks-a", "claim-a")
        _vm(compute, network, "aks-a", "claim-a")  # a retried launch finds the same VM
        _vm(compute, network, "aks-b", "claim-b")
        assert writes.doubles() == {}
        assert writes.last_kind == "launch"
        _vm(compute, network, "aks-b2", "claim-b")  # a second VM for one claim
        assert writes.doubles() == {"claim-b": ["aks-b", "aks-b2"]}
        compute.virtual_machines.begin_delete(RG, "aks-a").result()
        assert writes.last_kind == "termination"
        assert writes.writes == 2 * 4 + 1  # (NIC + VM) x 4, one delete
    finally:
        seeded.emulator.handle = inner  # type: ignore[method-assign]
