"""Faults of the engine itself, on ``temporal-server`` with PostgreSQL: the server SIGKILLed
and restarted in the middle of launches (``JOINERY_FAULT_CLAIMS``: 30 in CI, the issue's
100 on demand) and of a consolidation round (after the round marked its candidate and
launched the replacement, before it deleted the candidate), and again in the middle of
drains; PostgreSQL stopped for 30 s; the worker's connection to
Temporal cut. Every workflow resumes and ends where it should; the round completes or is
undone and leaves no mark; no claim gets a second instance and no instance is left behind;
the worker reconnects on its own and its ``/readyz`` says not-ready while it cannot reach
Temporal.

The figures (how long each recovery took) are printed; run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from activities.kubernetes import nodeclaims, raw
from activities.kubernetes.client import Kube
from activities.kubernetes.errors import NotFound
from models import contract
from models import labels as L
from sandbox import fleet_checks
from sandbox.nodes import NodeSimulator
from sandbox.scenarios import spread_fleet as fleet
from sandbox.temporal_server import ProductionTemporal
from tests.support.cloud import Cloud
from tests.support.cuttable_proxy import CuttableProxy
from tests.support.kube_objects import (
    condition,
    create_claim,
    create_namespace,
    ensure_nodeclass,
    ensure_nodepool,
)
from tests.support.prod_worker import RunningWorker, joinery_worker
from tests.support.round_history import read_rounds
from tests.support.waiting import until
from workflows.disruption.state import VALIDATING
from workflows.disruption.workflow import DisruptionWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.production]

# In-flight lifecycles when the server is killed. The bar is 100, and
# ``JOINERY_FAULT_CLAIMS=100`` runs it (docs/performance.md has the figures); on this shared
# 2-core machine 100 lifecycles take about two minutes to all be Ready, more than the tier's
# share of CI time, so CI runs 30.
CLAIMS = int(os.environ.get("JOINERY_FAULT_CLAIMS", "30"))
# The consolidation round killed in its middle: an m5.xlarge node holding a filler and a web
# pod (sandbox.scenarios.spread_fleet); the filler goes, so an m5.large holds the web pod for
# less and a round replaces the node.
FLEET_NODES = 1
# The lifecycles' own pool is never consolidated: its nodes are empty, and rounds deleting
# them would race the "all Ready" the test waits for.
NEVER_CONSOLIDATE = {"consolidateAfter": "Never"}


def figure(text: str) -> None:
    print(f"\n[engine-faults] {text}", flush=True)


def ready_names(admin: Kube, pool: str) -> set[str]:
    listed, _ = nodeclaims.list_(admin, nodepool=pool)
    out = set()
    for claim in listed:
        c = condition(claim, "Ready")
        if c and c["status"] == "True":
            out.add(claim["metadata"]["name"])
    return out


def launched_names(admin: Kube, pool: str) -> set[str]:
    listed, _ = nodeclaims.list_(admin, nodepool=pool)
    return {c["metadata"]["name"] for c in listed if (c.get("status") or {}).get("providerID")}


def live_instances(cloud: Cloud, pool: str) -> dict[str, list[str]]:
    return fleet_checks.instances(cloud.clients.ec2, nodepool=pool, live_only=True)


async def create_claims(admin: Kube, names: list[str], pool: str) -> None:
    """Off the event loop, which the worker under test shares (see ``until``)."""

    def create_all() -> None:
        for name in names:
            create_claim(admin, name, pool)

    await asyncio.to_thread(create_all)


def delete_claim(admin: Kube, name: str) -> None:
    with contextlib.suppress(NotFound):
        raw.call(
            admin.custom.delete_cluster_custom_object, "karpenter.sh", "v1", "nodeclaims", name
        )


async def workflow_status(client: Client, wid: str) -> WorkflowExecutionStatus | None:
    try:
        return (await client.get_workflow_handle(wid).describe()).status
    except RPCError:
        return None


async def all_terminated(client: Client, cluster: str, names: list[str]) -> bool:
    for name in names:
        wid = contract.nodeclaim_id(cluster, name)
        if await workflow_status(client, wid) != WorkflowExecutionStatus.COMPLETED:
            return False
    return True


def mid_round(admin: Kube, pool: str, before: set[str]) -> str | None:
    """The candidate a command is replacing right now, once it is marked (its node tainted
    ``karpenter.sh/disrupted``) and its replacement launched, and before it is deleted."""
    claims, _ = nodeclaims.list_(admin, nodepool=pool)
    launched = [
        c
        for c in claims
        if c["metadata"]["name"] not in before and (c.get("status") or {}).get("providerID")
    ]
    if not launched:
        return None
    for node in raw.call(admin.core.list_node, label_selector=f"{L.NODEPOOL}={pool}")["items"]:
        taints = (node.get("spec") or {}).get("taints") or []
        if not any(t.get("key") == L.DISRUPTED_TAINT_KEY for t in taints):
            continue
        for claim in claims:
            name = claim["metadata"]["name"]
            if (
                name in before
                and not claim["metadata"].get("deletionTimestamp")
                and (claim.get("status") or {}).get("nodeName") == node["metadata"]["name"]
            ):
                return str(name)
    return None


async def lost_workflows(client: Client, cluster: str, live: set[str], gone: set[str]) -> list[str]:
    """Every lifecycle whose claim lives is Running; every one whose claim is gone Completed
    (``Terminated``); the cluster's own workflows are Running."""
    want = {contract.nodeclaim_id(cluster, n): WorkflowExecutionStatus.RUNNING for n in live}
    want |= {contract.nodeclaim_id(cluster, n): WorkflowExecutionStatus.COMPLETED for n in gone}
    for wid in (
        contract.provisioner_id(cluster),
        contract.disruption_id(cluster),
        contract.garbage_collection_id(cluster),
    ):
        want[wid] = WorkflowExecutionStatus.RUNNING
    lost = []
    for wid, status in want.items():
        found = await workflow_status(client, wid)
        if found != status:
            lost.append(f"{wid}: {found.name if found else 'not found'}, expected {status.name}")
    return lost


async def test_server_sigkill_during_launches_and_a_round_then_drains(
    production_temporal: ProductionTemporal,
    prod_client: Client,
    kube: Kube,
    admin: Kube,
    cloud: Cloud,
) -> None:
    suffix = uuid.uuid4().hex[:6]
    fleet_pool, ns, pool = f"round-{suffix}", f"round-{suffix}", f"kill-{suffix}"
    before: set[str] = set()  # the fleet's claims before the round
    hold = threading.Event()

    def joins(claim: Mapping[str, Any]) -> bool:
        """While ``hold`` is set, the instances of the fleet's replacement and of the
        lifecycles boot but their nodes do not join, as EC2 instances take their 30-40 s:
        the round that launched the replacement waits, its candidate marked and not yet
        deleted, and the lifecycles wait for registration, for as long as the test needs."""
        meta = claim["metadata"]
        claim_pool = (meta.get("labels") or {}).get(L.NODEPOOL)
        held = claim_pool == pool or (claim_pool == fleet_pool and meta["name"] not in before)
        return not (hold.is_set() and held)

    ensure_nodeclass(admin)  # this test runs its own worker, its simulated kubelets gated
    with NodeSimulator(admin, interval=0.2, should_register=joins):
        async with joinery_worker(prod_client, kube, cloud) as worker:
            client, cluster = worker.client, worker.cluster
            # the fleet a round consolidates: a filler and a web pod on each m5.xlarge node
            fleet.create_nodepool(admin, fleet_pool)
            create_namespace(admin, ns)
            fleet.create_web_pdb(admin, ns)
            fleet.create_spread(admin, ns, fleet_pool, fleet.FILLER, FLEET_NODES)
            fleet.create_spread(admin, ns, fleet_pool, fleet.WEB, FLEET_NODES)
            await until(
                lambda: all(
                    len(fleet.running(admin, ns, app)) == FLEET_NODES
                    for app in (fleet.FILLER, fleet.WEB)
                ),
                timeout=180,
                what="the fleet running",
            )
            before |= {
                c["metadata"]["name"] for c in nodeclaims.list_(admin, nodepool=fleet_pool)[0]
            }
            assert len(before) == FLEET_NODES, before

            # the filler goes: the web pod now fits an m5.large, and a round replaces the
            # node; while the round waits out its validation delay, the lifecycles launch
            hold.set()
            fleet.scale(admin, ns, fleet.FILLER, 0)
            rounds = client.get_workflow_handle(contract.disruption_id(cluster))

            async def validating() -> bool:
                return (await rounds.query(DisruptionWorkflow.status)).phase == VALIDATING

            await until(validating, timeout=120, what="a round validating its command")
            ensure_nodepool(admin, pool, disruption=NEVER_CONSOLIDATE)
            names = [f"{pool}-{i:03d}" for i in range(CLAIMS)]
            began = time.monotonic()
            await create_claims(admin, names, pool)
            candidate = await until(
                lambda: mid_round(admin, fleet_pool, before),
                timeout=180 + 3 * CLAIMS,  # the round's activities queue behind the launches
                what="the round mid-command",
            )
            await until(
                lambda: len(launched_names(admin, pool)) >= max(1, CLAIMS // 10),
                timeout=180,
                what="the first launches",
            )
            launched_at_kill = len(launched_names(admin, pool))
            ready_at_kill = len(ready_names(admin, pool))
            still = mid_round(admin, fleet_pool, before)
            production_temporal.kill_server()
            killed = time.monotonic()
            assert still == candidate, "the round left its middle before the SIGKILL"
            assert ready_at_kill < CLAIMS, "the lifecycles were no longer in flight"
            await until(lambda: worker.readyz() == 503, timeout=30, what="/readyz not ready")
            await asyncio.to_thread(production_temporal.start_server)
            restarted = time.monotonic()
            await until(lambda: worker.readyz() == 200, timeout=60, what="/readyz ready again")
            healthy = time.monotonic()
            hold.clear()  # the replacement and the lifecycles' nodes join now
            await until(
                lambda: len(ready_names(admin, pool)) == CLAIMS,
                timeout=300,
                what=f"all {CLAIMS} claims Ready after the restart",
            )
            all_ready = time.monotonic()
            await until(
                lambda: fleet.consolidated(admin, ns, fleet_pool, FLEET_NODES),
                timeout=300,
                what=f"the fleet consolidated to {FLEET_NODES} m5.large",
            )
            consolidated = time.monotonic()
            figure(
                f"launch + round: {CLAIMS} claims, {launched_at_kill} launched and "
                f"{ready_at_kill} Ready at the SIGKILL ({killed - began:.1f}s after the first "
                f"create), the round mid-command replacing {candidate}; server back in "
                f"{restarted - killed:.1f}s, worker ready {healthy - restarted:.1f}s after "
                f"the restart, all claims Ready {all_ready - restarted:.1f}s after it, the "
                f"fleet consolidated {consolidated - restarted:.1f}s after it"
            )
            await check_round_and_launches(worker, admin, cloud, fleet_pool, pool, before, names)
            await kill_during_drains(production_temporal, worker, admin, cloud, pool, names)


async def check_round_and_launches(
    worker: RunningWorker,
    admin: Kube,
    cloud: Cloud,
    fleet_pool: str,
    pool: str,
    before: set[str],
    names: list[str],
) -> None:
    client, cluster = worker.client, worker.cluster
    # the round completed, or was undone and a later round did the work: either way every
    # candidate is gone, every live claim of the fleet is a replacement a command launched,
    # and no mark of a disruption is left behind
    rounds = await read_rounds(client, cluster)
    ours = [c for c in rounds.commands if any(n in before for n in c.claims)]
    assert {n for c in ours for n in c.claims} == before, ours
    replacements = {r for c in ours for r in c.replacements}
    fleet_claims = {c["metadata"]["name"] for c in nodeclaims.list_(admin, nodepool=fleet_pool)[0]}
    assert len(fleet_claims) == FLEET_NODES and fleet_claims <= replacements, ours
    assert fleet_checks.disruption_leftovers(admin, nodepool=fleet_pool) == []
    outcome = "completed" if len(ours) == FLEET_NODES else f"{len(ours) - FLEET_NODES} undone"
    figure(f"round: {outcome}; commands on the fleet: {[(c.claims, c.replacements) for c in ours]}")
    # nothing lost, launched twice or leaked
    gone = before | (replacements - fleet_claims)
    lost = await lost_workflows(client, cluster, set(names) | fleet_claims, gone)
    assert lost == [], lost
    for p in (fleet_pool, pool):
        ever = fleet_checks.instances(cloud.clients.ec2, nodepool=p)
        assert fleet_checks.double_launches(ever) == []
    for p, claims in ((fleet_pool, fleet_claims), (pool, set(names))):
        live = live_instances(cloud, p)
        assert set(live) == claims, f"every claim has an instance, and no other: {live}"
        assert {len(ids) for ids in live.values()} == {1}


async def kill_during_drains(
    production_temporal: ProductionTemporal,
    worker: RunningWorker,
    admin: Kube,
    cloud: Cloud,
    pool: str,
    names: list[str],
) -> None:
    """Delete every claim, kill the server while they are being retired."""
    client, cluster = worker.client, worker.cluster

    def delete_all() -> None:
        for name in names:
            delete_claim(admin, name)

    await asyncio.to_thread(delete_all)
    await until(
        lambda: len(live_instances(cloud, pool)) <= CLAIMS * 9 // 10,
        timeout=180,
        what="the first terminations",
    )
    production_temporal.kill_server()
    killed = time.monotonic()
    await asyncio.sleep(2)
    await asyncio.to_thread(production_temporal.start_server)
    restarted = time.monotonic()
    await until(
        lambda: all_terminated(client, cluster, names),
        timeout=300,
        what="every lifecycle Terminated",
    )
    await until(
        lambda: not nodeclaims.list_(admin, nodepool=pool)[0], timeout=60, what="claims gone"
    )
    done = time.monotonic()
    figure(
        f"drain: server back in {restarted - killed:.1f}s, all {CLAIMS} lifecycles ended "
        f"{done - restarted:.1f}s after the restart"
    )
    for name in names[:5]:
        assert await client.get_workflow_handle(contract.nodeclaim_id(cluster, name)).result() == (
            "Terminated"
        )
    assert live_instances(cloud, pool) == {}, "leaked instances"
    assert (
        fleet_checks.double_launches(fleet_checks.instances(cloud.clients.ec2, nodepool=pool)) == []
    )


async def test_postgres_stopped_30s(
    production_temporal: ProductionTemporal,
    prod_worker: RunningWorker,
    admin: Kube,
    cloud: Cloud,
) -> None:
    pool = f"pg-{uuid.uuid4().hex[:6]}"
    ensure_nodepool(admin, pool)
    names = [f"{pool}-{i:02d}" for i in range(10)]
    for name in names:
        create_claim(admin, name, pool)
    await until(lambda: len(launched_names(admin, pool)) >= 1, timeout=120, what="a first launch")
    production_temporal.stop_postgres()
    stopped = time.monotonic()
    readiness = set()
    while time.monotonic() - stopped < 30:
        readiness.add(prod_worker.readyz())
        await asyncio.sleep(1)
    await asyncio.to_thread(production_temporal.start_postgres)
    back = time.monotonic()
    await until(
        lambda: len(ready_names(admin, pool)) == len(names),
        timeout=240,
        what="all claims Ready after PostgreSQL came back",
    )
    figure(
        f"PostgreSQL down {back - stopped:.1f}s (/readyz answers seen meanwhile: "
        f"{sorted(readiness)}); all {len(names)} Ready {time.monotonic() - back:.1f}s after"
    )
    counts = live_instances(cloud, pool)
    assert sorted(counts) == sorted(names) and {len(ids) for ids in counts.values()} == {1}
    for name in names:
        delete_claim(admin, name)
    await until(
        lambda: all_terminated(prod_worker.client, prod_worker.cluster, names),
        timeout=180,
        what="retired",
    )
    assert live_instances(cloud, pool) == {}


async def test_worker_connection_cut(
    production_temporal: ProductionTemporal,
    prod_client: Client,
    kube: Kube,
    admin: Kube,
    cloud: Cloud,
) -> None:
    from sandbox.nodes import NodeSimulator

    host, port = production_temporal.address.split(":")
    proxy = await CuttableProxy(host, int(port)).start()
    through = await Client.connect(proxy.address, namespace=production_temporal.namespace)
    pool = f"cut-{uuid.uuid4().hex[:6]}"
    ensure_nodeclass(admin)  # this test runs its own worker, without the prod_worker fixture
    ensure_nodepool(admin, pool)
    names = [f"{pool}-{i:02d}" for i in range(10)]
    try:
        with NodeSimulator(admin, interval=0.2):
            async with joinery_worker(through, kube, cloud) as running:
                await until(lambda: running.readyz() == 200, timeout=30, what="ready")
                for name in names:
                    create_claim(admin, name, pool)

                async def started() -> bool:
                    found = [
                        await workflow_status(
                            prod_client, contract.nodeclaim_id(running.cluster, n)
                        )
                        for n in names
                    ]
                    return all(s is not None for s in found)

                await until(started, timeout=60, what="every lifecycle started")
                proxy.cut_all()
                cut = time.monotonic()
                await until(lambda: running.readyz() == 503, timeout=30, what="not ready")
                not_ready_after = time.monotonic() - cut
                await asyncio.sleep(max(0.0, 10 - (time.monotonic() - cut)))
                proxy.restore()
                restored = time.monotonic()
                await until(lambda: running.readyz() == 200, timeout=60, what="ready again")
                ready_after = time.monotonic() - restored
                await until(
                    lambda: len(ready_names(admin, pool)) == len(names),
                    timeout=240,
                    what="all claims Ready after the cut",
                )
                figure(
                    f"connection cut 10s: /readyz 503 after {not_ready_after:.1f}s, 200 again "
                    f"{ready_after:.1f}s after the restore; all {len(names)} Ready "
                    f"{time.monotonic() - restored:.1f}s after the restore"
                )
                counts = live_instances(cloud, pool)
                assert sorted(counts) == sorted(names)
                assert {len(ids) for ids in counts.values()} == {1}
                for name in names:
                    delete_claim(admin, name)
                await until(
                    lambda: all_terminated(prod_client, running.cluster, names),
                    timeout=180,
                    what="retired",
                )
                assert live_instances(cloud, pool) == {}
    finally:
        await proxy.close()
