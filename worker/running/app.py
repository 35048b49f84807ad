"""The worker process: Temporal worker + Kubernetes watchers + health/metrics endpoint.

``run_worker(settings)`` is the entry point ``joinery worker`` and ``joinery dev`` call::

    from worker.running.app import run_worker
    from worker.running.settings import Settings, TemporalSettings

    await run_worker(Settings(TemporalSettings(address="localhost:7233"), kubeconfig=...))

It runs until ``stop`` (an ``asyncio.Event``) is set or the task is cancelled. Several
workers may run against one cluster and task queue: workflow ids make starts idempotent
and the watchers' signals only set flags. Each serves two queues: the lifecycles' and, with
slots of its own, the cluster workflows' (``models.contract.cluster_workflows_queue``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.worker import Worker

from activities.cloud import registry
from activities.cloud.options import AWS, AZURE, PROVIDERS, ProviderOptions
from activities.cloud.provider import CloudProvider
from activities.deps import Deps
from activities.disruption.defs import DisruptionActivities
from activities.garbage.defs import GarbageCollectionActivities
from activities.kubernetes import rate_limit
from activities.kubernetes.client import Kube, connect
from activities.kubernetes.node_index import NodeIndex
from activities.kubernetes.nodeclass_store import NodeClassStore
from activities.kubernetes.object_cache import WatchedObjects
from activities.lifecycle.defs import NodeClaimActivities
from activities.planning.defs import PlanningActivities
from models import contract
from worker.running import (
    azure_settings,
    catalog_cache,
    cluster_facts,
    connection,
    sdk_metrics,
    search_attributes,
    telemetry,
    tuning,
)
from worker.running.cluster_metrics import VIEW as metrics_view
from worker.running.cluster_metrics import watchers_ready
from worker.running.health import HealthServer, TemporalProbe
from worker.running.metrics import PrometheusCounters, observe_provider
from worker.running.node_repair import NodeRepairLoop
from worker.running.settings import Settings
from worker.running.status_reporter import StatusReporter
from worker.running.watchers import Watchers
from workflows.disruption.state import DisruptionInput
from workflows.disruption.workflow import DisruptionWorkflow
from workflows.garbage.state import GarbageCollectionInput
from workflows.garbage.workflow import GarbageCollectionWorkflow
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import Batching, ProvisionerInput, ProvisionerWorkflow

log = logging.getLogger(__name__)

# The cluster's own workflows, one of each per cluster, on a queue of their own.
CLUSTER_WORKFLOWS: Sequence[type] = (
    ProvisionerWorkflow,
    DisruptionWorkflow,
    GarbageCollectionWorkflow,
)
# The lifecycles' queue serves the cluster workflows too: runs started there before they had
# a queue of their own keep running there.
WORKFLOWS: Sequence[type] = (NodeClaimWorkflow, *CLUSTER_WORKFLOWS)


def activities_for(deps: Deps) -> list[Callable[..., Any]]:
    return [
        *NodeClaimActivities(deps).all(),
        *PlanningActivities(deps).all(),
        *DisruptionActivities(deps).all(),
        *GarbageCollectionActivities(deps).all(),
    ]


def provider_options(settings: Settings) -> ProviderOptions:
    """What the settings tell the cloud provider (``activities.cloud.registry`` builds it)."""
    opts = ProviderOptions(
        provider=settings.provider,
        cluster=settings.cluster,
        region=settings.region,
        endpoint_url=settings.aws_endpoint_url,
        interruption_queue=settings.interruption_queue,
        cluster_endpoint=settings.cluster_endpoint,
        cluster_ca_bundle=settings.cluster_ca_bundle,
        service_cidr=settings.service_cidr,
        kubernetes_version=settings.kubernetes_version,
        min_values_policy=settings.policies.min_values,
        eks_control_plane=settings.eks_control_plane,
        isolated_vpc=settings.isolated_vpc,
        vm_memory_overhead_percent=settings.vm_memory_overhead_percent,
        reserved_enis=settings.reserved_enis,
        nodeclass_refresh_seconds=settings.nodeclass_refresh_seconds,
    )
    if settings.provider == AZURE:  # Karpenter Azure's settings, from the environment
        opts = dataclasses.replace(opts, **azure_settings.provider_fields(os.environ))
    return opts


def refusal(provider: str) -> str | None:
    """Why the worker cannot run on ``provider`` (one line), or None when it can: on Azure,
    without the subscription and node resource group its VMs go into."""
    if provider == AWS:
        return None
    if provider not in PROVIDERS:  # argparse checks the flag, not JOINERY_PROVIDER
        return f"--provider {provider!r} (or JOINERY_PROVIDER): one of {', '.join(PROVIDERS)}"
    if lacking := azure_settings.missing(os.environ):
        return f"--provider {provider}: {' and '.join(lacking)} must be set (where its VMs go)"
    return None


def cloud_provider(settings: Settings) -> CloudProvider:
    """The cluster's one provider, as ``--provider`` chose it."""
    return registry.build(provider_options(settings))


def discover_cluster(cloud: CloudProvider) -> None:
    """Learn the cluster now so a wrong name or a missing permission shows at start, in one
    line; launches retry discovery themselves."""
    try:
        line = cloud.describe_cluster()
    except Exception as exc:
        log.error("%s", exc)
        return
    log.info("%s", line)


def build_worker(
    client: Client, deps: Deps, task_queue: str, threads: int = 32, *, sandboxed: bool = False
) -> Worker:
    """The worker of the lifecycles' queue (every workflow type, every activity)."""
    return Worker(
        client,
        task_queue=task_queue,
        workflows=list(WORKFLOWS),
        activities=activities_for(deps),
        **tuning.worker_options(sandboxed, threads=threads),
    )


def build_cluster_worker(
    client: Client, deps: Deps, task_queue: str, *, sandboxed: bool = False
) -> Worker:
    """The worker of the cluster workflows' own queue beside the lifecycles' ``task_queue``:
    its workflow task slots and activity threads are never held by lifecycles."""
    return Worker(
        client,
        task_queue=contract.cluster_workflows_queue(task_queue),
        workflows=list(CLUSTER_WORKFLOWS),
        activities=activities_for(deps),
        # no launches run here
        **tuning.worker_options(sandboxed, threads=tuning.CLUSTER_ACTIVITY_THREADS, launches=0),
    )


async def ensure_cluster_workflows(client: Client, settings: Settings) -> None:
    """Start (or find running) the cluster's provisioner, disruption and garbage-collection
    workflows."""
    cluster, sa = settings.cluster, settings.search_attributes
    wanted: list[tuple[Any, Any, str, str]] = []
    # A provisioner already running takes the batch window of this worker's settings.
    batching = Batching(settings.batch_idle_seconds, settings.batch_max_seconds)
    if settings.provisioner:
        wanted.append(
            (
                ProvisionerWorkflow.run,
                ProvisionerInput(
                    cluster,
                    sa,
                    batch_idle_seconds=settings.batch_idle_seconds,
                    batch_max_seconds=settings.batch_max_seconds,
                ),
                contract.provisioner_id(cluster),
                f"provisioner · cluster {cluster}",
            )
        )
    if settings.disruption:
        wanted.append(
            (
                DisruptionWorkflow.run,
                DisruptionInput(
                    cluster, sa, validation_delay_seconds=settings.disruption_validation_delay
                ),
                contract.disruption_id(cluster),
                f"disruption rounds · cluster {cluster}",
            )
        )
    if settings.garbage_collection:
        wanted.append(
            (
                GarbageCollectionWorkflow.run,
                GarbageCollectionInput(
                    cluster,
                    settings.garbage_collection_period,
                    settings.garbage_collection_grace,
                ),
                contract.garbage_collection_id(cluster),
                f"garbage collection · cluster {cluster}",
            )
        )
    queue = contract.cluster_workflows_queue(settings.temporal.task_queue)
    for run, inp, workflow_id, summary in wanted:
        signal: dict[str, Any] = (
            {"start_signal": contract.SIGNAL_BATCHING, "start_signal_args": [batching]}
            if isinstance(inp, ProvisionerInput)
            else {}
        )
        handle = await client.start_workflow(
            run,
            inp,
            id=workflow_id,
            task_queue=queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            static_summary=summary,
            **signal,
        )
        # a run started before the cluster workflows had a queue of their own moves there
        if (await handle.describe()).task_queue != queue:
            await handle.signal(contract.SIGNAL_MOVE_TO_QUEUE, queue)


async def run_worker(
    settings: Settings,
    *,
    stop: asyncio.Event | None = None,
    kube: Kube | None = None,
    cloud: CloudProvider | None = None,
    client: Client | None = None,
) -> None:
    """Run until ``stop`` is set (or cancelled). Adapters may be passed in (tests, sandbox)."""
    # a provider passed in (tests, the sandbox) is already built: nothing to refuse
    refused = refusal(settings.provider) if cloud is None else None
    if refused is not None:
        raise ValueError(refused)
    if kube is None:
        kube = connect(settings.kubeconfig or None)
        rate_limit.limit(kube.api_client, settings.kube_client_qps, settings.kube_client_burst)
    if settings.eks_control_plane is False or settings.provider == AZURE:
        # an AKS cluster's version, endpoint and CA come from its API server (no EKS)
        settings = cluster_facts.from_api_server(settings, kube)
    cloud = cloud or cloud_provider(settings)
    if client is None:
        client = await connection.connect(
            settings.temporal,
            telemetry.plugins(settings.otlp_endpoint),
            runtime=sdk_metrics.runtime(),  # temporal_* series on /metrics
        )
    if settings.search_attributes:  # before any workflow could upsert one it lacks
        await search_attributes.ensure(
            client, settings.temporal.namespace, register=settings.register_search_attributes
        )
    # Replicas share what the cloud refused through a ConfigMap (EC2: shared_offerings.py).
    cloud.share_unavailable_offerings(kube.core)
    queue = settings.temporal.task_queue
    deps = Deps(
        kube=kube,
        cloud=cloud,
        counters=PrometheusCounters(),
        cluster=settings.cluster,
        lifecycle_queue=queue,
        nodeclass_store=NodeClassStore(kube, resource=cloud.nodeclass_kind.resource),
        node_index=NodeIndex(),
        watched=WatchedObjects() if settings.watchers else None,
        policies=settings.policies,
    )
    cloud.observe = deps.counters.cloudprovider_call  # karpenter_cloudprovider_*
    observe_provider(cloud, deps.counters)
    sandboxed = settings.workflow_sandbox
    worker = build_worker(client, deps, queue, settings.activity_threads, sandboxed=sandboxed)
    cluster_worker = build_cluster_worker(client, deps, queue, sandboxed=sandboxed)
    watchers: Watchers | None = None
    repair: NodeRepairLoop | None = None  # the NodeRepair feature gate's loop
    health: HealthServer | None = None
    running = False
    service = client.service_client
    probe = TemporalProbe(lambda timeout: service.check_health(retry=False, timeout=timeout))
    probing = asyncio.create_task(probe.run())

    def ready() -> bool:
        return running and probe.reachable and (watchers is None or watchers.ready)

    if settings.health_port >= 0:
        health = HealthServer(settings.health_port, ready, host=settings.health_host).start()
        log.info("health and metrics on :%d", health.port)
    stopper = stop or asyncio.Event()
    cache = Path(settings.catalog_cache) if settings.catalog_cache else None
    # Load the catalog now, so the first plan or launch after a (re)start does not pay for it
    # inside an activity (it overlaps the wait for a dead worker's lost activities).
    warming = asyncio.create_task(asyncio.to_thread(catalog_cache.warm, cloud, cache))
    discovery = asyncio.create_task(asyncio.to_thread(discover_cluster, cloud))
    try:
        async with worker, cluster_worker:
            running = True
            await ensure_cluster_workflows(client, settings)
            if settings.watchers:
                watchers = Watchers(
                    kube=kube,
                    client=client,
                    loop=asyncio.get_running_loop(),
                    cluster=settings.cluster,
                    task_queue=settings.temporal.task_queue,
                    search_attributes=settings.search_attributes,
                    cloud=cloud,
                    status=StatusReporter(
                        kube, cloud, claims=deps.watched.nodeclaims if deps.watched else None
                    ).start(),
                    nodeclass_store=deps.nodeclass_store,
                    node_index=deps.node_index,
                    watched=deps.watched,
                    pods_pending_spacing=settings.batch_idle_seconds / 2,
                ).start()
                metrics_view.synced = watchers_ready(watchers)  # karpenter_cluster_state_*
            if settings.watchers and settings.policies.gates.node_repair:
                repair = NodeRepairLoop(kube, deps.counters, cloud=cloud).start()
            log.info(
                "worker up: task queues %s and %s, namespace %s",
                queue,
                contract.cluster_workflows_queue(queue),
                settings.temporal.namespace,
            )
            await stopper.wait()
    finally:
        running = False
        warming.cancel()
        discovery.cancel()
        probing.cancel()
        if repair is not None:
            repair.close()
        if watchers is not None:
            watchers.close()
            if watchers.status is not None:
                watchers.status.close()
        if health is not None:
            with contextlib.suppress(Exception):
                health.stop()
