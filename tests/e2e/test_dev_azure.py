"""``joinery dev --provider azure``: the whole system on emulated Azure, two scenarios on one
stack (``smoke``, then ``interruption``: a spot eviction), to the end, with every check held
and no VM or NIC left.

One sandbox runs both scenarios in turn (the e2e tier already runs every EC2 scenario's
sandbox at once; a second stack per Azure scenario would only add load). The stack is the one
``joinery dev --provider azure`` starts (``sandbox.dev.DevStack``), on free ports.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox import scenarios
from sandbox.dev import DevOptions, DevStack, running

SCENARIO_TIMEOUT = 200.0


@pytest.fixture(scope="module")
def stack() -> Iterator[DevStack]:
    options = DevOptions(provider="azure", region="eastus", temporal_port=0, boot_delay=1.0)
    with running(options, log=print) as started:
        yield started


@pytest.mark.timeout(2 * SCENARIO_TIMEOUT + 240)
def test_smoke_then_spot_eviction_on_azure(stack: DevStack) -> None:
    for name in ("smoke", "interruption"):
        summary = scenarios.run(name, stack, log=print, timeout=SCENARIO_TIMEOUT)
        print(summary.to_json())
        worker_log = stack.worker.log_tail(40) if stack.worker else ""
        assert summary.ok, f"{name}: {summary.failures}\n{worker_log}"
        assert summary.instancesLeftRunning == 0
        assert summary.extra.get("network_interfaces_left") == 0
        assert summary.extra.get("disks_left") == 0
        assert summary.nodes >= (2 if name == "smoke" else 4)


def test_the_stack_is_azure_only(stack: DevStack) -> None:
    """The worker is pointed at the emulated Azure (and nothing of AWS), and the AKSNodeClass
    and NodePool of ``manifests/azure.yaml`` are applied."""
    from activities.kubernetes.resources import AKSNODECLASS, NODEPOOL

    env = stack.worker_env()
    assert env["JOINERY_PROVIDER"] == "azure"
    assert not [k for k in env if k.startswith("AWS_") or k == "JOINERY_AWS_ENDPOINT_URL"]
    assert stack.azure is not None and stack.moto is None
    assert env["AZURE_ENDPOINT_URL"] == stack.azure.endpoint
    assert stack.admin is not None
    custom = stack.admin.custom
    nodeclass = custom.get_cluster_custom_object(
        AKSNODECLASS.group, AKSNODECLASS.version, AKSNODECLASS.plural, "default"
    )
    assert nodeclass["spec"]["vnetSubnetID"] == stack.azure.subnet_id
    pool = custom.get_cluster_custom_object(
        NODEPOOL.group, NODEPOOL.version, NODEPOOL.plural, "default"
    )
    assert pool["spec"]["template"]["spec"]["nodeClassRef"]["kind"] == "AKSNodeClass"
