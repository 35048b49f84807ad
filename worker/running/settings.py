"""Worker and CLI settings: flags first, then ``JOINERY_*`` / ``TEMPORAL_*`` environment."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field

from activities.cloud.options import AWS, PROVIDERS
from activities.garbage.types import GRACE_SECONDS as GC_GRACE_SECONDS
from models import contract
from models.policies import Policies
from worker.running import karpenter_settings, policy_settings
from workflows.disruption.state import VALIDATION_DELAY_SECONDS
from workflows.garbage.state import PERIOD_SECONDS as GC_PERIOD_SECONDS


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_flag(name: str) -> bool:
    """An on/off environment setting: 1, true, yes or on (any case) is on."""
    return _env(name).lower() in ("1", "true", "yes", "on")


@dataclass
class TemporalSettings:
    address: str = "localhost:7233"
    namespace: str = "default"
    # "" means the cluster's own queue, ``joinery@<cluster>`` (models.contract.task_queue).
    task_queue: str = ""
    tls: bool = False
    tls_cert: str = ""
    tls_key: str = ""
    tls_ca: str = ""
    api_key: str = ""


@dataclass
class Settings:
    temporal: TemporalSettings
    cluster: str = "joinery"
    # The cluster's cloud: aws or azure (activities/cloud/registry.py builds it).
    provider: str = AWS
    kubeconfig: str = ""
    region: str = "us-east-1"
    aws_endpoint_url: str = ""
    interruption_queue: str = ""
    cluster_endpoint: str = ""
    # Karpenter's clusterCABundle; with the service CIDR and version, what EKS DescribeCluster
    # would tell (each one given here overrides discovery; discovery is skipped when all are).
    cluster_ca_bundle: str = ""
    service_cidr: str = ""
    kubernetes_version: str = ""
    health_port: int = 8081
    health_host: str = "0.0.0.0"  # probes reach a pod on its IP; the sandbox uses loopback
    search_attributes: bool = False
    # Register the search attributes the namespace lacks at start (else it exits naming them).
    register_search_attributes: bool = False
    otlp_endpoint: str = ""
    activity_threads: int = 32
    workflow_sandbox: bool = False  # worker/running/tuning.py: why workflow code runs unsandboxed
    watchers: bool = True
    provisioner: bool = True
    # Run the cluster's DisruptionWorkflow (consolidation, emptiness, drift).
    disruption: bool = True
    # Seconds a round's decision must still hold before its commands run (Karpenter's 15 s;
    # the integration tests shorten it). Applies when the workflow starts.
    disruption_validation_delay: float = VALIDATION_DELAY_SECONDS
    # Run the cluster's GarbageCollectionWorkflow (orphan instances, claims without an
    # instance or a NodePool, unused launch templates).
    garbage_collection: bool = True
    garbage_collection_period: float = GC_PERIOD_SECONDS  # seconds between rounds
    # Seconds after launch before an instance or a claim is judged (Karpenter's 30 s; the
    # integration tests shorten it, as the period, so they do not sit it out).
    garbage_collection_grace: float = GC_GRACE_SECONDS
    catalog_cache: str = ""
    # Karpenter's MIN_VALUES_POLICY, PREFERENCE_POLICY and FEATURE_GATES (see the section
    # "Karpenter's scheduling policies and feature gates" below).
    policies: Policies = field(default_factory=Policies)
    # -- Karpenter's settings under their own names (worker/running/karpenter_settings.py) --
    isolated_vpc: bool = False  # ISOLATED_VPC: prices from the offline table, no Pricing API
    # EKS_CONTROL_PLANE: None asks DescribeCluster for what is not given; False never does.
    eks_control_plane: bool | None = None
    vm_memory_overhead_percent: float = 0.075  # VM_MEMORY_OVERHEAD_PERCENT
    reserved_enis: int = 0  # RESERVED_ENIS
    nodeclass_refresh_seconds: float = 60.0  # AMI_ / SUBNET_REFRESH_INTERVAL, the shorter
    batch_idle_seconds: float = 1.0  # BATCH_IDLE_DURATION
    batch_max_seconds: float = 10.0  # BATCH_MAX_DURATION
    kube_client_qps: float = 0.0  # KUBE_CLIENT_QPS; 0 is no limit
    kube_client_burst: int = 0  # KUBE_CLIENT_BURST; 0 is the QPS
    log_level: str = "info"  # LOG_LEVEL

    def __post_init__(self) -> None:
        if not self.temporal.task_queue:
            self.temporal.task_queue = contract.task_queue(self.cluster)


def add_temporal_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Temporal connection")
    g.add_argument(
        "--address",
        default=_env("TEMPORAL_ADDRESS", "localhost:7233"),
        help="Temporal frontend host:port ($TEMPORAL_ADDRESS, default localhost:7233)",
    )
    g.add_argument(
        "--namespace",
        default=_env("TEMPORAL_NAMESPACE", "default"),
        help="Temporal namespace ($TEMPORAL_NAMESPACE, default default)",
    )
    g.add_argument(
        "--task-queue",
        default=_env("JOINERY_TASK_QUEUE"),
        help="default: joinery@<cluster>",
    )
    g.add_argument(
        "--tls",
        action="store_true",
        default=env_flag("TEMPORAL_TLS"),
        help="connect with TLS ($TEMPORAL_TLS; implied by a client cert or an API key)",
    )
    g.add_argument("--tls-cert", default=_env("TEMPORAL_TLS_CERT"), help="client cert (PEM)")
    g.add_argument("--tls-key", default=_env("TEMPORAL_TLS_KEY"), help="client key (PEM)")
    g.add_argument("--tls-ca", default=_env("TEMPORAL_TLS_CA"), help="server CA (PEM)")
    g.add_argument(
        "--api-key", default=_env("TEMPORAL_API_KEY"), help="API key (or $TEMPORAL_API_KEY)"
    )
    g.add_argument(
        "--cluster",
        default=karpenter_settings.lookup("CLUSTER_NAME", "joinery"),
        help="the cluster's name (default: $JOINERY_CLUSTER, then $CLUSTER_NAME, then joinery)",
    )


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    """The EKS cluster facts; empty means "ask DescribeCluster" (see activities/ec2/cluster.py)."""
    g = p.add_argument_group("EKS cluster (discovered through DescribeCluster when empty)")
    g.add_argument(
        "--cluster-endpoint",
        default=karpenter_settings.lookup("CLUSTER_ENDPOINT"),
        help="API server address for node user data ($JOINERY_CLUSTER_ENDPOINT, $CLUSTER_ENDPOINT)",
    )
    g.add_argument(
        "--cluster-ca-bundle",
        default=karpenter_settings.lookup("CLUSTER_CA_BUNDLE"),
        help="cluster CA, base64 PEM ($JOINERY_CLUSTER_CA_BUNDLE, $CLUSTER_CA_BUNDLE)",
    )
    g.add_argument(
        "--service-cidr",
        default=_env("JOINERY_SERVICE_CIDR"),
        help="the cluster's service CIDR, for the nodes' DNS address ($JOINERY_SERVICE_CIDR)",
    )
    g.add_argument(
        "--kubernetes-version",
        default=_env("JOINERY_KUBERNETES_VERSION"),
        help="the control plane's minor version, e.g. 1.31: selects AMIs"
        " ($JOINERY_KUBERNETES_VERSION)",
    )


def add_provider_arg(p: argparse.ArgumentParser) -> None:
    """``--provider``: the one cloud the cluster's nodes run on (env ``JOINERY_PROVIDER``)."""
    p.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=_env("JOINERY_PROVIDER", AWS) or AWS,
        help="the cluster's cloud (default: aws; azure also reads AZURE_* settings)",
    )


def temporal_from(args: argparse.Namespace) -> TemporalSettings:
    return TemporalSettings(
        address=args.address,
        namespace=args.namespace,
        task_queue=args.task_queue or contract.task_queue(args.cluster),
        tls=bool(args.tls or args.tls_cert or args.api_key),
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_ca=args.tls_ca,
        api_key=args.api_key,
    )


# --- Karpenter's scheduling policies and feature gates -----------------------------------
# MIN_VALUES_POLICY, PREFERENCE_POLICY and FEATURE_GATES: the flags and their parsing live in
# worker/running/policy_settings.py, which imports nothing heavy (``joinery plan`` takes the
# same flags and must not load the worker's clients).
add_policy_args = policy_settings.add_policy_args
policies_from = policy_settings.policies_from
