"""``joinery worker``: run the Temporal worker, watchers and health endpoint."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import signal
from typing import Any

from worker.running import karpenter_settings
from worker.running.app import refusal, run_worker
from worker.running.settings import (
    Settings,
    add_aws_args,
    add_cluster_args,
    add_policy_args,
    add_provider_arg,
    add_temporal_args,
    env_flag,
    policies_from,
    temporal_from,
)
from worker.usage import UsageError
from workflows.disruption.state import VALIDATION_DELAY_SECONDS


def register(sub: Any) -> None:
    p = sub.add_parser("worker", help="run the Joinery worker (workflows, activities, watchers)")
    add_temporal_args(p)
    add_provider_arg(p)
    env = os.environ.get
    p.add_argument(
        "--kubeconfig",
        default=env("KUBECONFIG", ""),
        help="the cluster's kubeconfig (default $KUBECONFIG, else in-cluster, else ~/.kube/config)",
    )
    add_aws_args(
        p,
        endpoint_help="EC2-compatible endpoint (an emulator) instead of AWS; prices then offline",
        queue_help="SQS queue of EC2 interruption events, name or URL; off when empty",
    )
    add_cluster_args(p)
    add_policy_args(p)
    p.add_argument(
        "--health-port",
        type=int,
        default=int(karpenter_settings.lookup("HEALTH_PROBE_PORT", "8081")),
        help="port of /healthz, /readyz and /metrics ($JOINERY_HEALTH_PORT, $HEALTH_PROBE_PORT)",
    )
    p.add_argument(
        "--health-host",
        default=env("JOINERY_HEALTH_HOST", "0.0.0.0"),
        help="address of /healthz, /readyz and /metrics (all interfaces by default)",
    )
    p.add_argument(
        "--search-attributes",
        action="store_true",
        default=env_flag("JOINERY_SEARCH_ATTRIBUTES"),
        help="upsert the search attributes (NodePool, NodeClaim, ...; docs/temporal.md): the"
        " worker checks the namespace has them at start and exits naming any missing",
    )
    p.add_argument(
        "--register-search-attributes",
        action="store_true",
        default=env_flag("JOINERY_REGISTER_SEARCH_ATTRIBUTES"),
        help="with --search-attributes: register the ones the namespace lacks at start"
        " (needs operator rights on the namespace)",
    )
    p.add_argument(
        "--otlp-endpoint",
        default=env("OTEL_EXPORTER_OTLP_ENDPOINT", ""),
        help="export traces by OTLP/HTTP here (off when empty)",
    )
    p.add_argument(
        "--catalog-cache",
        default=env("JOINERY_CATALOG_CACHE", ""),
        help="file to keep the EC2 catalog in across restarts (off when empty)",
    )
    p.add_argument(
        "--disruption-validation-delay",
        type=float,
        default=env("JOINERY_DISRUPTION_VALIDATION_DELAY", str(VALIDATION_DELAY_SECONDS)),
        metavar="SECONDS",
        help="how long a disruption decision must still hold before it is carried out "
        "(default: Karpenter's 15; applies when the cluster's disruption workflow starts)",
    )
    p.add_argument(
        "--activity-threads",
        type=int,
        default=32,
        help="activities run at once on the lifecycles' queue (default 32)",
    )
    p.add_argument(
        "--workflow-sandbox",
        action="store_true",
        default=env_flag("JOINERY_WORKFLOW_SANDBOX"),
        help="run workflow code in Temporal's sandbox, which checks at run time that it calls"
        " nothing nondeterministic (about a third more worker CPU per workflow task)",
    )
    p.add_argument("--no-watchers", action="store_true", help="only run workflows and activities")
    p.add_argument("-v", "--verbose", action="store_true", help="log at debug level")
    karpenter_settings.add_worker_args(p)
    p.set_defaults(func=run)


def settings_from(args: argparse.Namespace) -> Settings:
    if args.activity_threads < 1:
        raise UsageError("--activity-threads must be at least 1")
    if not 0 <= args.health_port <= 65535:
        raise UsageError("--health-port must be 0..65535")
    if not 0 <= args.disruption_validation_delay <= 3600:
        raise UsageError("--disruption-validation-delay must be 0..3600 seconds")
    refused = refusal(args.provider)
    if refused is not None:
        raise UsageError(refused)
    karpenter = karpenter_settings.worker_values(args)
    return Settings(
        temporal=temporal_from(args),
        cluster=args.cluster,
        provider=args.provider,
        kubeconfig=args.kubeconfig,
        region=args.region,
        aws_endpoint_url=args.aws_endpoint_url,
        interruption_queue=args.interruption_queue,
        cluster_endpoint=args.cluster_endpoint,
        cluster_ca_bundle=args.cluster_ca_bundle,
        service_cidr=args.service_cidr,
        kubernetes_version=args.kubernetes_version,
        health_port=args.health_port,
        health_host=args.health_host,
        search_attributes=args.search_attributes,
        register_search_attributes=args.register_search_attributes,
        otlp_endpoint=args.otlp_endpoint,
        activity_threads=args.activity_threads,
        workflow_sandbox=args.workflow_sandbox,
        watchers=not args.no_watchers,
        catalog_cache=args.catalog_cache,
        disruption_validation_delay=args.disruption_validation_delay,
        policies=policies_from(args),
        **dataclasses.asdict(karpenter),
    )


async def _main(settings: Settings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await run_worker(settings, stop=stop)


LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "error": logging.WARNING}


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else LOG_LEVELS[settings.log_level],
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    asyncio.run(_main(settings))
    return 0
