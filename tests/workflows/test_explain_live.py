"""``joinery explain NODE`` against the real control plane and the dev Temporal server, with
the cluster's DisruptionWorkflow running on its real activities: one node empty (the engine
would delete it; ``joinery pause`` holds it), one blocked by ``karpenter.sh/do-not-disrupt``,
one kept (its pool removes only empty nodes). The command says so for each, from both the
live engine and the workflow's last round, and fails in one line on bad input."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.deps import Deps
from activities.disruption.defs import DisruptionActivities
from activities.kubernetes import custom_objects
from activities.kubernetes.client import Kube
from activities.kubernetes.resources import NODEPOOL
from models import contract
from models import labels as L
from models.catalog import dump_catalog
from sandbox.cluster import Cluster
from tests.support.cloud import Cloud
from tests.support.initialized_nodes import initialized_node
from tests.support.kube_objects import M5, create_namespace, create_pod, ensure_nodeclass, pod
from tests.support.manifests import nodepool_body
from worker.cli import main
from workflows.disruption.state import BLOCKED, HELD, KEPT, DisruptionInput
from workflows.disruption.workflow import DisruptionWorkflow
from workflows.provisioner import ProvisionerInput, ProvisionerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


@dataclass
class Nodes:
    empty: str
    pinned: str
    busy: str
    busy_claim: str


@pytest.fixture
def nodes(kube: Kube, admin: Kube, cloud: Cloud) -> Nodes:
    """Three initialized nodes of a fresh pool that consolidates only empty nodes."""
    ensure_nodeclass(admin)
    pool = f"explain-{uuid.uuid4().hex[:6]}"
    disruption = {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "0s",
        "budgets": [{"nodes": "100%"}],
    }
    body = nodepool_body(pool, requirements=M5, disruption=disruption)
    custom_objects.create(admin, NODEPOOL, body)
    deps = Deps(kube=kube, cloud=cloud.provider)
    _, empty = initialized_node(deps, admin, pool)
    _, pinned = initialized_node(deps, admin, pool)
    busy_claim, busy = initialized_node(deps, admin, pool)
    admin.core.patch_node(pinned, {"metadata": {"annotations": {L.DO_NOT_DISRUPT: "true"}}})
    namespace = f"explain-{uuid.uuid4().hex[:6]}"
    create_namespace(admin, namespace)
    create_pod(admin, pod("web-0", namespace, node=busy))
    return Nodes(empty, pinned, busy, busy_claim)


@pytest_asyncio.fixture(loop_scope="session")
async def rounds(
    dev_env: WorkflowEnvironment, kube: Kube, cloud: Cloud, task_queue: str
) -> AsyncIterator[tuple[str, WorkflowHandle[DisruptionWorkflow, None]]]:
    """The cluster's DisruptionWorkflow on its real activities, with disruption paused for
    every NodePool (so the test's empty node, and other tests' nodes, stay)."""
    cluster = f"explain-{uuid.uuid4().hex[:6]}"
    deps = Deps(kube=kube, cloud=cloud.provider, cluster=cluster)
    async with Worker(
        dev_env.client,
        task_queue=task_queue,
        workflows=[DisruptionWorkflow, ProvisionerWorkflow],
        activities=DisruptionActivities(deps).all(),
        activity_executor=ThreadPoolExecutor(4),
    ):
        provisioner = await dev_env.client.start_workflow(
            ProvisionerWorkflow.run,
            ProvisionerInput(cluster, paused_all=True),
            id=contract.provisioner_id(cluster),
            task_queue=task_queue,
        )
        handle = await dev_env.client.start_workflow(
            DisruptionWorkflow.run,
            DisruptionInput(cluster, validation_delay_seconds=2.0),
            id=contract.disruption_id(cluster),
            task_queue=task_queue,
        )
        try:
            yield cluster, handle
        finally:
            await handle.terminate("test over")
            await provisioner.terminate("test over")


async def _named(handle: WorkflowHandle[DisruptionWorkflow, None], nodes: Nodes) -> None:
    """Wait until a finished round named the test's three nodes."""
    want = {nodes.empty, nodes.pinned, nodes.busy}
    for _ in range(240):
        status = await handle.query(DisruptionWorkflow.status)
        if status.phase == "Idle" and want <= {o.node for o in status.last_outcomes}:
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"no round named {sorted(want)}: {status}")


async def _explain(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, ["explain", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


async def test_explain_says_why_each_node_is_disrupted_blocked_or_kept(
    cluster: Cluster,
    cloud: Cloud,
    dev_env: WorkflowEnvironment,
    nodes: Nodes,
    rounds: tuple[str, WorkflowHandle[DisruptionWorkflow, None]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name, handle = rounds
    await _named(handle, nodes)
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(dump_catalog(cloud.provider.instance_types())))
    common = [
        "--kubeconfig",
        str(cluster.kubeconfig_path),
        "--catalog",
        str(catalog),
        "--address",
        dev_env.client.service_client.config.target_host,
        "--cluster",
        name,
    ]

    async def answer(node: str) -> dict[str, Any]:
        code, out, err = await _explain(capsys, node, *common, "-o", "json")
        assert code == 0, err
        doc: dict[str, Any] = json.loads(out)
        return doc

    empty = await answer(nodes.empty)
    assert empty["now"]["verdict"] == "disrupt" and empty["now"]["method"] == "Empty"
    assert empty["now"]["heldBy"] == "disruption is paused for every NodePool"
    assert empty["lastRound"]["outcome"] == HELD
    assert empty["budget"]["allowed"]["Empty"] == 3

    pinned = await answer(nodes.pinned)
    assert pinned["now"]["verdict"] == "blocked"
    assert L.DO_NOT_DISRUPT in pinned["now"]["reason"]
    assert pinned["lastRound"]["outcome"] == BLOCKED
    assert L.DO_NOT_DISRUPT in pinned["lastRound"]["reason"]

    busy = await answer(nodes.busy_claim)  # a NodeClaim name finds its node
    assert busy["node"] == nodes.busy and busy["nodeClaim"] == nodes.busy_claim
    assert busy["now"]["verdict"] == "kept"
    assert "removes only empty nodes" in busy["now"]["reason"]
    assert busy["lastRound"]["outcome"] == KEPT
    # without --catalog the engine prices with EC2's catalog, as the worker's does
    ec2 = ["--region", "us-east-1", "--aws-endpoint-url", cloud.server.endpoint_url]
    code, out, err = await _explain(
        capsys, nodes.pinned, *common[:2], *common[4:], *ec2, "-o", "json"
    )
    assert code == 0, err
    assert json.loads(out)["now"]["verdict"] == "blocked"

    code, text, _ = await _explain(capsys, nodes.busy, *common)
    assert code == 0
    lines = text.splitlines()
    assert lines[0].startswith(f"Node {nodes.busy} (NodeClaim {nodes.busy_claim}, NodePool ")
    assert lines[1].startswith("  now:         kept: nodepool ")
    assert lines[2].startswith("  last round:  round ") and ": kept: " in lines[2]


async def test_bad_input_and_an_unreachable_temporal_exit_2(
    cluster: Cluster,
    nodes: Nodes,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cloud: Cloud,
    dev_env: WorkflowEnvironment,
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(dump_catalog(cloud.provider.instance_types())))
    common = ["--kubeconfig", str(cluster.kubeconfig_path), "--catalog", str(catalog)]
    unreachable = [*common, "--address", "127.0.0.1:1"]

    code, out, err = await _explain(
        capsys, nodes.pinned, "--kubeconfig", str(cluster.kubeconfig_path), "--region", ""
    )
    assert code == 2 and out == ""
    assert (
        err
        == "joinery explain: --region: no AWS region given (nor $AWS_REGION); or give --catalog\n"
    )

    code, out, err = await _explain(capsys, "no-such-node", *unreachable)
    assert code == 2 and out == ""
    assert (
        err == "joinery explain: node no-such-node: not found (no Node or NodeClaim of that name)\n"
    )

    # Temporal down: the live engine still answers, the workflow part says it is unavailable
    code, out, err = await _explain(capsys, nodes.pinned, *unreachable)
    assert code == 2
    assert "now:         blocked: node has karpenter.sh/do-not-disrupt" in out
    assert "last round:  unavailable (cannot reach Temporal at 127.0.0.1:1" in out
    assert err.count("\n") == 1
    assert err.startswith("joinery explain: workflow part unavailable: cannot reach Temporal")

    # Temporal up, but no worker ever ran for this cluster
    address = dev_env.client.service_client.config.target_host
    code, out, err = await _explain(
        capsys, nodes.pinned, *common, "--address", address, "--cluster", "nobody"
    )
    assert code == 2 and "now:         blocked: " in out
    assert err == (
        "joinery explain: workflow part unavailable: no workflow disruption@nobody"
        " (is `joinery worker` running for this cluster?)\n"
    )
