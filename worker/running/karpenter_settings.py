"""Karpenter's settings under Karpenter's own environment names, and the ones Joinery refuses.

A migrating operator brings Karpenter's environment (``CLUSTER_NAME``, ``RESERVED_ENIS``,
``BATCH_IDLE_DURATION``, ...) and Helm values. Each of Karpenter v1.14's settings is listed
here once: implemented (the worker reads it, after its own flag and ``JOINERY_*`` name), owned
by another part of the settings, or refused. A refused setting given a value that asks for
something Joinery does not do stops the worker at start with one line saying so: nothing is
accepted and then ignored. ``SETTINGS`` is also what docs/operations.md's table is checked
against (tests/unit/worker/test_karpenter_settings.py).

Precedence, for every implemented setting: the command-line flag, then the ``JOINERY_*``
variable, then Karpenter's variable, then the default.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from worker.usage import UsageError

# What a setting is to Joinery.
IMPLEMENTED = "implemented"
REFUSED = "refused"  # values other than ``accepts`` stop the worker at start
MINVALUES = "minvalues"  # parsed with the scheduling policies (FEATURE_GATES and the policies)


@dataclass(frozen=True, slots=True)
class KarpenterSetting:
    """One of Karpenter's settings and what Joinery does with it."""

    env: str  # Karpenter's environment variable
    default: str  # Joinery's default, as text ("" none); for a refused one, Karpenter's
    what: str  # what Joinery does with it (one sentence, for the docs table)
    status: str = IMPLEMENTED
    flag: str = ""  # ``joinery worker`` flag, when there is one
    joinery_env: str = ""  # the ``JOINERY_*`` name that wins over ``env``
    chart: str = ""  # the chart value that sets it (deploy/helm/joinery)
    # For a refused setting: whether a value asks for what Joinery does anyway.
    accepts: Callable[[str], bool] | None = None


def _is(*values: str) -> Callable[[str], bool]:
    allowed = {v.lower() for v in values}
    return lambda value: value.strip().lower() in allowed


def _false(value: str) -> bool:
    return value.strip().lower() in ("", "false", "0", "no", "off")


def _true(value: str) -> bool:
    return value.strip().lower() in ("true", "1", "yes", "on")


SETTINGS: tuple[KarpenterSetting, ...] = (
    # -- the provider's (aws/karpenter-provider-aws pkg/operator/options) ------------------
    KarpenterSetting(
        "CLUSTER_NAME",
        "",
        "the cluster's name: discovery tags, instance tags, node user data, workflow ids and "
        "the default task queue `joinery@<cluster>` (default `joinery`)",
        flag="--cluster",
        joinery_env="JOINERY_CLUSTER",
        chart="settings.clusterName",
    ),
    KarpenterSetting(
        "CLUSTER_ENDPOINT",
        "",
        "the API server address written into node user data; discovered through EKS "
        "DescribeCluster when empty",
        flag="--cluster-endpoint",
        joinery_env="JOINERY_CLUSTER_ENDPOINT",
        chart="settings.clusterEndpoint",
    ),
    KarpenterSetting(
        "CLUSTER_CA_BUNDLE",
        "",
        "the cluster CA bundle (base64 PEM) written into node user data; discovered when empty",
        flag="--cluster-ca-bundle",
        joinery_env="JOINERY_CLUSTER_CA_BUNDLE",
        chart="settings.clusterCABundle",
    ),
    KarpenterSetting(
        "INTERRUPTION_QUEUE",
        "",
        "the SQS queue of EC2 interruption events (spot interruption, rebalance, scheduled "
        "change, state change); interruption handling is off when empty",
        flag="--interruption-queue",
        joinery_env="JOINERY_INTERRUPTION_QUEUE",
        chart="settings.interruptionQueue",
    ),
    KarpenterSetting(
        "ISOLATED_VPC",
        "false",
        "no call to AWS services without a VPC endpoint: on-demand prices come from the "
        "offline table instead of the Pricing API",
        flag="--isolated-vpc",
        joinery_env="JOINERY_ISOLATED_VPC",
        chart="settings.isolatedVPC",
    ),
    KarpenterSetting(
        "EKS_CONTROL_PLANE",
        "",
        "true: cluster facts not given come from EKS DescribeCluster; false: DescribeCluster "
        "is never called, the Kubernetes version comes from the API server and the endpoint "
        "and CA bundle from the kubeconfig unless given; unset: DescribeCluster for what is "
        "not given (Karpenter's default is false)",
        flag="--eks-control-plane",
        joinery_env="JOINERY_EKS_CONTROL_PLANE",
        chart="settings.eksControlPlane",
    ),
    KarpenterSetting(
        "VM_MEMORY_OVERHEAD_PERCENT",
        "0.075",
        "the fraction of an instance type's memory the hypervisor keeps (0 <= x < 1), "
        "subtracted from every type's capacity in the catalog",
        flag="--vm-memory-overhead-percent",
        joinery_env="JOINERY_VM_MEMORY_OVERHEAD_PERCENT",
        chart="settings.vmMemoryOverheadPercent",
    ),
    KarpenterSetting(
        "RESERVED_ENIS",
        "0",
        "network interfaces kept out of the max-pods formula (VPC CNI custom networking): "
        "changes every ENI-limited type's pods and the memory kube-reserved",
        flag="--reserved-enis",
        joinery_env="JOINERY_RESERVED_ENIS",
        chart="settings.reservedENIs",
    ),
    KarpenterSetting(
        "AMI_REFRESH_INTERVAL",
        "1m",
        "how long a resolved EC2NodeClass (AMIs, subnets, security groups) serves launches "
        "before EC2 is asked again; Joinery refreshes them together, at the shorter of this "
        "and SUBNET_REFRESH_INTERVAL (at least 1m)",
        flag="--ami-refresh-interval",
        joinery_env="JOINERY_AMI_REFRESH_INTERVAL",
        chart="settings.amiRefreshInterval",
    ),
    KarpenterSetting(
        "SUBNET_REFRESH_INTERVAL",
        "1m",
        "as AMI_REFRESH_INTERVAL: the shorter of the two sets the EC2NodeClass refresh",
        flag="--subnet-refresh-interval",
        joinery_env="JOINERY_SUBNET_REFRESH_INTERVAL",
        chart="settings.subnetRefreshInterval",
    ),
    KarpenterSetting(
        "DISABLE_DRY_RUN",
        "false",
        "Joinery does not dry-run launches to validate an EC2NodeClass: only true (no dry run) "
        "is accepted",
        status=REFUSED,
        chart="settings.disableDryRun",
        accepts=_true,
    ),
    KarpenterSetting(
        "ENABLE_ZONAL_SHIFT",
        "false",
        "ARC zonal shift is not implemented: only false is accepted",
        status=REFUSED,
        chart="settings.enableZonalShift",
        accepts=_false,
    ),
    KarpenterSetting(
        "AWS_FEATURE_GATES",
        "NodeClassCEL=false",
        "Joinery's CRDs carry their own validation; NodeClassCEL=true is not implemented",
        status=REFUSED,
        chart="settings.awsFeatureGates.*",
        accepts=lambda v: _false(v) or _is("NodeClassCEL=false")(v.replace(" ", "")),
    ),
    KarpenterSetting(
        "ASSUME_ROLE_ARN",
        "",
        "removed in Karpenter v1; give the worker its role through IRSA or EKS Pod Identity "
        "(serviceAccount.roleArn)",
        status=REFUSED,
        accepts=_is(""),
    ),
    KarpenterSetting(
        "ASSUME_ROLE_DURATION",
        "15m",
        "removed in Karpenter v1 with ASSUME_ROLE_ARN",
        status=REFUSED,
        accepts=_is("", "15m"),
    ),
    # -- the core's (kubernetes-sigs/karpenter pkg/operator/options) -----------------------
    KarpenterSetting(
        "BATCH_IDLE_DURATION",
        "1s",
        "a provisioning round starts once no pod turned unschedulable for this long (a Go "
        "duration or seconds); passed to the cluster's ProvisionerWorkflow",
        flag="--batch-idle-duration",
        joinery_env="JOINERY_BATCH_IDLE_DURATION",
        chart="settings.batchIdleDuration",
    ),
    KarpenterSetting(
        "BATCH_MAX_DURATION",
        "10s",
        "a provisioning round starts at the latest this long after the first pending pod",
        flag="--batch-max-duration",
        joinery_env="JOINERY_BATCH_MAX_DURATION",
        chart="settings.batchMaxDuration",
    ),
    KarpenterSetting(
        "KUBE_CLIENT_QPS",
        "0",
        "the sustained rate of Kubernetes API requests of one worker (a token bucket); 0 is "
        "no limit, Joinery's default (Karpenter's is 200)",
        flag="--kube-client-qps",
        joinery_env="JOINERY_KUBE_CLIENT_QPS",
    ),
    KarpenterSetting(
        "KUBE_CLIENT_BURST",
        "0",
        "the requests one worker may make at once above KUBE_CLIENT_QPS; 0 is the QPS "
        "(Karpenter's default is 300)",
        flag="--kube-client-burst",
        joinery_env="JOINERY_KUBE_CLIENT_BURST",
    ),
    KarpenterSetting(
        "LOG_LEVEL",
        "info",
        "debug, info or error (error also keeps warnings); -v is debug",
        flag="--log-level",
        joinery_env="JOINERY_LOG_LEVEL",
        chart="logLevel",
    ),
    KarpenterSetting(
        "HEALTH_PROBE_PORT",
        "8081",
        "the port of /healthz, /readyz and /metrics",
        flag="--health-port",
        joinery_env="JOINERY_HEALTH_PORT",
        chart="port",
    ),
    KarpenterSetting(
        "METRICS_PORT",
        "8080",
        "Joinery serves /metrics on the health port (HEALTH_PROBE_PORT): only that port is "
        "accepted",
        status=REFUSED,
    ),
    KarpenterSetting(
        "FEATURE_GATES",
        "SpotToSpotConsolidation=false,NodeRepair=false,...",
        "SpotToSpotConsolidation and NodeRepair on or off (Name=bool,...)",
        status=MINVALUES,
        chart="settings.featureGates.*",
    ),
    KarpenterSetting(
        "MIN_VALUES_POLICY",
        "Strict",
        "Strict or BestEffort: whether a launch that can no longer meet minValues fails",
        status=MINVALUES,
        chart="settings.minValuesPolicy",
    ),
    KarpenterSetting(
        "PREFERENCE_POLICY",
        "Respect",
        "Respect or Ignore: whether preferred affinities and ScheduleAnyway spreads shape plans",
        status=MINVALUES,
        chart="settings.preferencePolicy",
    ),
    KarpenterSetting(
        "LOG_OUTPUT_PATHS",
        "stdout",
        "Joinery logs to stderr only: only stderr is accepted",
        status=REFUSED,
        accepts=_is("stderr"),
    ),
    KarpenterSetting(
        "LOG_ERROR_OUTPUT_PATHS",
        "stderr",
        "the logger's own errors go to stderr: only stderr is accepted",
        status=REFUSED,
        accepts=_is("", "stderr"),
    ),
    KarpenterSetting(
        "DISABLE_LEADER_ELECTION",
        "false",
        "Joinery elects no leader: every replica works and workflow ids keep one decision per "
        "cluster, so only true is accepted",
        status=REFUSED,
        accepts=_true,
    ),
    KarpenterSetting(
        "LEADER_ELECTION_NAME",
        "karpenter-leader-election",
        "no leader election, no lease: not accepted",
        status=REFUSED,
        accepts=_is(""),
    ),
    KarpenterSetting(
        "LEADER_ELECTION_NAMESPACE",
        "",
        "no leader election, no lease: not accepted",
        status=REFUSED,
        accepts=_is(""),
    ),
    KarpenterSetting(
        "DISABLE_CONTROLLER_WARMUP",
        "true",
        "every replica's watchers start at once (there is no leader to wait for): only false "
        "is accepted",
        status=REFUSED,
        accepts=_false,
    ),
    KarpenterSetting(
        "DISABLE_CLUSTER_STATE_OBSERVABILITY",
        "false",
        "cluster-state metrics and events cannot be turned off: only false is accepted",
        status=REFUSED,
        accepts=_false,
    ),
    KarpenterSetting(
        "ENABLE_PROFILING",
        "false",
        "no profiling endpoint: only false is accepted",
        status=REFUSED,
        accepts=_false,
    ),
    KarpenterSetting(
        "MEMORY_LIMIT",
        "-1",
        "a Go garbage-collector limit; the Python worker has none: only -1 is accepted",
        status=REFUSED,
        accepts=_is("", "-1"),
    ),
    KarpenterSetting(
        "CPU_REQUESTS",
        "1000",
        "Karpenter sizes its controllers' concurrency by it; Joinery's is --activity-threads: "
        "not accepted",
        status=REFUSED,
        accepts=_is(""),
    ),
    KarpenterSetting(
        "IGNORE_DRA_REQUESTS",
        "true",
        "Joinery does not model dynamic resource allocation: only true is accepted",
        status=REFUSED,
        accepts=lambda v: v.strip() == "" or _true(v),
    ),
    KarpenterSetting(
        "SCHEDULER_CONFIG",
        "",
        "a kube-scheduler profile to mirror is not implemented: only empty is accepted",
        status=REFUSED,
        accepts=_is(""),
    ),
    KarpenterSetting(
        "KARPENTER_SERVICE",
        "",
        "the webhook's Service; Joinery has no webhook: only empty is accepted",
        status=REFUSED,
        accepts=_is(""),
    ),
)

BY_ENV: Mapping[str, KarpenterSetting] = {s.env: s for s in SETTINGS}


def lookup(name: str, default: str = "", environ: Mapping[str, str] | None = None) -> str:
    """The value of the implemented Karpenter setting ``name`` from the environment: its
    ``JOINERY_*`` variable, then Karpenter's, then ``default`` (flags come first, in argparse)."""
    env = os.environ if environ is None else environ
    setting = BY_ENV[name]
    for var in (setting.joinery_env, setting.env):
        if var and var in env:
            return env[var]
    return default


def refusals(
    environ: Mapping[str, str] | None = None, *, health_port: int | None = None
) -> list[str]:
    """One line per refused setting given a value Joinery cannot honour."""
    env = os.environ if environ is None else environ
    out: list[str] = []
    for setting in SETTINGS:
        if setting.status != REFUSED or setting.env not in env:
            continue
        value = env[setting.env]
        if setting.env == "METRICS_PORT":
            if health_port is not None and value.strip() == str(health_port):
                continue
        elif setting.accepts is not None and setting.accepts(value):
            continue
        out.append(f"setting {setting.env}={value!r} is not supported by Joinery: {setting.what}")
    return out


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def _go_duration(text: str, value: str) -> float:
    pos, seconds = 0, 0.0
    while pos < len(value):
        part = _DURATION_PART.match(value, pos)
        if part is None:
            raise ValueError(f"{text!r} is not a duration (examples: 1s, 500ms, 1m30s)")
        seconds += float(part.group(1)) * _UNIT_SECONDS[part.group(2)]
        pos = part.end()
    return seconds


def duration_seconds(text: str) -> float:
    """Seconds in a Go duration (``1s``, ``500ms``, ``1m30s``, ``0``) or a plain number of
    seconds; ``ValueError`` for anything else or a negative value."""
    value = text.strip()
    if not value:
        raise ValueError("empty duration")
    try:
        seconds = float(value)
    except ValueError:
        seconds = _go_duration(text, value)
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{text!r} is not a non-negative duration")
    return seconds


def boolean(text: str) -> bool:
    """Karpenter's boolean settings: true or false (any case); ``ValueError`` otherwise."""
    value = text.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off", ""):
        return False
    raise ValueError(f"{text!r} is not true or false")


# -- ``joinery worker``'s flags for them ------------------------------------------------------


# (Karpenter's name, metavar, help): the flag and its default are the setting's own.
_WORKER_FLAGS: tuple[tuple[str, str, str], ...] = (
    (
        "ISOLATED_VPC",
        "BOOL",
        "call no AWS service without a VPC endpoint: on-demand prices from the offline "
        "table, not the Pricing API",
    ),
    (
        "EKS_CONTROL_PLANE",
        "BOOL",
        "true: ask EKS DescribeCluster for cluster facts not given; false: never (version "
        "from the API server, endpoint and CA from the kubeconfig); default: ask for what is "
        "missing",
    ),
    (
        "VM_MEMORY_OVERHEAD_PERCENT",
        "FRACTION",
        "fraction of each instance type's memory the hypervisor keeps (default 0.075)",
    ),
    (
        "RESERVED_ENIS",
        "N",
        "network interfaces kept out of the max-pods formula, for VPC CNI custom "
        "networking (default 0)",
    ),
    (
        "AMI_REFRESH_INTERVAL",
        "DURATION",
        "how long a resolved EC2NodeClass serves launches before EC2 is asked again; the "
        "shorter of this and --subnet-refresh-interval (default 1m)",
    ),
    ("SUBNET_REFRESH_INTERVAL", "DURATION", "see --ami-refresh-interval (default 1m)"),
    (
        "BATCH_IDLE_DURATION",
        "DURATION",
        "a provisioning round starts once no pod turned unschedulable for this long (default 1s)",
    ),
    (
        "BATCH_MAX_DURATION",
        "DURATION",
        "a provisioning round starts at the latest this long after the first pending pod "
        "(default 10s)",
    ),
    (
        "KUBE_CLIENT_QPS",
        "QPS",
        "sustained Kubernetes API requests per second of this worker; 0 is no limit (default)",
    ),
    ("KUBE_CLIENT_BURST", "N", "requests at once above --kube-client-qps (default: the QPS)"),
    ("LOG_LEVEL", "LEVEL", "debug, info or error (default info; -v is debug)"),
)


def add_worker_args(p: argparse.ArgumentParser) -> None:
    """The flags of the implemented settings not registered elsewhere (the cluster's name,
    endpoint, CA bundle, interruption queue and health port are, with their neighbours)."""
    g = p.add_argument_group(
        "Karpenter's settings (flag, then JOINERY_<NAME>, then Karpenter's <NAME>)"
    )
    for name, metavar, text in _WORKER_FLAGS:
        setting = BY_ENV[name]
        g.add_argument(
            setting.flag,
            default=lookup(name, setting.default),
            metavar=metavar,
            help=f"{text} (${name})",
        )


LOG_LEVELS = ("debug", "info", "error")
MIN_REFRESH_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class WorkerValues:
    """The implemented settings, checked: what ``Settings`` takes."""

    isolated_vpc: bool = False
    eks_control_plane: bool | None = None
    vm_memory_overhead_percent: float = 0.075
    reserved_enis: int = 0
    nodeclass_refresh_seconds: float = 60.0
    batch_idle_seconds: float = 1.0
    batch_max_seconds: float = 10.0
    kube_client_qps: float = 0.0
    kube_client_burst: int = 0
    log_level: str = "info"


def _checked(flag: str, text: str, parse: Callable[[str], Any]) -> Any:
    try:
        return parse(text)
    except ValueError as exc:
        raise UsageError(f"{flag} {text!r}: {exc}") from None


def _fraction(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and 0 <= value < 1):
        raise ValueError("must be a fraction, 0 <= x < 1 (0.075 is 7.5%)")
    return value


def _count(text: str) -> int:
    value = int(text.strip())
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def _rate(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError("must be 0 (no limit) or more")
    return value


def _refresh(text: str) -> float:
    value = duration_seconds(text)
    if value < MIN_REFRESH_SECONDS:
        raise ValueError("must be at least 1m, as Karpenter requires")
    return value


def _log_level(text: str) -> str:
    value = text.strip().lower() or "info"
    if value not in LOG_LEVELS:
        raise ValueError("must be debug, info or error")
    return value


def catalog_values(args: argparse.Namespace | None = None) -> tuple[float, int]:
    """VM_MEMORY_OVERHEAD_PERCENT and RESERVED_ENIS, checked, for a command that builds a
    catalog as the worker does: from its flags (``joinery catalog``), or with no ``args``
    from the environment (``joinery explain``)."""
    vm = (
        args.vm_memory_overhead_percent
        if args is not None
        else lookup("VM_MEMORY_OVERHEAD_PERCENT", "0.075")
    )
    enis = args.reserved_enis if args is not None else lookup("RESERVED_ENIS", "0")
    return (
        _checked("--vm-memory-overhead-percent", vm, _fraction),
        _checked("--reserved-enis", enis, _count),
    )


def worker_values(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> WorkerValues:
    """The flags of ``add_worker_args`` checked, and the refused settings refused: a
    ``UsageError`` (one line, exit 2) for the first bad value."""
    refused = refusals(environ, health_port=getattr(args, "health_port", None))
    if refused:
        raise UsageError("; ".join(refused))
    eks = args.eks_control_plane.strip()
    idle = _checked("--batch-idle-duration", args.batch_idle_duration, duration_seconds)
    most = _checked("--batch-max-duration", args.batch_max_duration, duration_seconds)
    if idle <= 0 or most <= 0:
        raise UsageError("--batch-idle-duration and --batch-max-duration must be more than 0")
    if idle > most:
        raise UsageError(
            f"--batch-idle-duration ({args.batch_idle_duration}) must not exceed "
            f"--batch-max-duration ({args.batch_max_duration})"
        )
    return WorkerValues(
        isolated_vpc=_checked("--isolated-vpc", args.isolated_vpc, boolean),
        eks_control_plane=_checked("--eks-control-plane", eks, boolean) if eks else None,
        vm_memory_overhead_percent=_checked(
            "--vm-memory-overhead-percent", args.vm_memory_overhead_percent, _fraction
        ),
        reserved_enis=_checked("--reserved-enis", args.reserved_enis, _count),
        nodeclass_refresh_seconds=min(
            _checked("--ami-refresh-interval", args.ami_refresh_interval, _refresh),
            _checked("--subnet-refresh-interval", args.subnet_refresh_interval, _refresh),
        ),
        batch_idle_seconds=idle,
        batch_max_seconds=most,
        kube_client_qps=_checked("--kube-client-qps", args.kube_client_qps, _rate),
        kube_client_burst=_checked("--kube-client-burst", args.kube_client_burst, _count),
        log_level=_checked("--log-level", args.log_level, _log_level),
    )
