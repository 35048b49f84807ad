"""``joinery explain NODE``: why a node is disrupted, blocked or kept, from the live cluster.

Reads the cluster read-only (list calls only, as ``joinery plan --kubeconfig`` does), runs
one disruption round on it (priced with ``--catalog``, or with EC2's catalog as the worker
reads it), and asks the cluster's DisruptionWorkflow (``status`` query) and
provisioner (pause state) what they know. NODE is a Node name or a NodeClaim name.

Exit codes: 0 with the full answer; 2 with one line on stderr for bad input (unknown node,
unreadable kubeconfig or catalog) or when Temporal cannot answer, in which case the live
engine's answer is still printed and the workflow part says it is unavailable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from activities.disruption import cluster_state
from activities.kubernetes import nodeclaims
from activities.kubernetes.client import Kube, from_kubeconfig
from activities.kubernetes.errors import KubernetesError
from models import contract
from models.instancetype import InstanceType
from models.nodepool import NodePool
from scheduling.disruption.round import RoundResult, run_round
from scheduling.inputs import Document, InputError
from worker.cli import azure_plan
from worker.cli import explain as X
from worker.plan_inputs import plan_catalogs
from worker.running import karpenter_settings
from worker.running.settings import add_aws_args, add_temporal_args, temporal_from
from worker.usage import UsageError, one_line
from workflows.disruption.state import DisruptionStatus

# A Temporal server that does not answer within this long is reported as unreachable.
TEMPORAL_TIMEOUT_S = 10.0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "explain", help="why a node is disrupted, blocked or kept (engine, last round, budget)"
    )
    p.add_argument("node", help="a Node name (or a NodeClaim name)")
    p.add_argument(
        "--kubeconfig",
        default=os.environ.get("KUBECONFIG", ""),
        help="the live cluster to read (read-only); default $KUBECONFIG",
    )
    p.add_argument(
        "--catalog",
        help="instance-type catalog file the engine prices with (`joinery catalog` writes one);"
        " default: read EC2's, for the NodePools' EC2NodeClasses, as the worker does",
    )
    add_aws_args(
        p,
        region_default="",
        endpoint_help="EC2-compatible endpoint (an emulator); prices then come from the offline"
        " table",
    )
    p.add_argument("-o", "--output", choices=("text", "json"), default="text", help="output format")
    add_temporal_args(p)
    p.set_defaults(func=run)


@dataclass
class LiveCluster:
    documents: list[Document]
    claims: list[dict[str, Any]]
    nodepools: list[NodePool] = field(default_factory=list)
    nodeclasses: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_cluster(kubeconfig: str) -> LiveCluster:
    if not kubeconfig:
        raise UsageError("--kubeconfig: no kubeconfig given (nor $KUBECONFIG)")
    try:
        kube: Kube = from_kubeconfig(kubeconfig)
    except Exception as exc:  # the client raises many kinds for a bad file
        raise UsageError(f"--kubeconfig {kubeconfig}: {exc}") from None
    try:
        state = cluster_state.read_state(kube)
        claims, _ = nodeclaims.list_(kube)
    except KubernetesError as exc:
        raise UsageError(f"--kubeconfig {kubeconfig}: {exc}") from None
    finally:
        kube.close()
    return LiveCluster(state.documents, claims, state.nodepools, state.nodeclasses)


def ec2_instance_types(
    args: argparse.Namespace, cluster: LiveCluster
) -> tuple[list[InstanceType], dict[str, list[InstanceType]]]:
    """The catalogs as the worker's compute activity sees them: EC2's types and prices, one
    merged catalog for pools with no view of their own, and each NodePool's own (its plan,
    its nodes' prices and drift), with the zones its EC2NodeClass has subnets in."""
    from activities.ec2.clients import AWSClients
    from activities.ec2.provider import EC2Provider
    from activities.ec2.settings import ClusterInfo, ProviderSettings
    from activities.planning.plan import disruption_catalogs

    if not args.region:
        raise UsageError("--region: no AWS region given (nor $AWS_REGION); or give --catalog")
    endpoint = args.aws_endpoint_url or None
    # sized as the worker sizes them (its RESERVED_ENIS and VM_MEMORY_OVERHEAD_PERCENT)
    vm_overhead, reserved_enis = karpenter_settings.catalog_values()
    try:
        provider = EC2Provider.create(
            ProviderSettings(
                region=args.region,
                cluster=ClusterInfo(args.cluster),
                vm_memory_overhead_percent=vm_overhead,
                reserved_enis=reserved_enis,
            ),
            AWSClients.create(args.region, endpoint),
            use_pricing_api=endpoint is None,
        )
        types, own = disruption_catalogs(provider, cluster.nodepools, cluster.nodeclasses)
    except Exception as exc:  # boto3 and the provider raise many kinds; one line either way
        raise UsageError(f"EC2 catalog of region {args.region}: {exc}") from None
    if not types:
        raise UsageError(f"EC2 catalog of region {args.region}: no instance type with a price")
    return types, own


def _name(body: Mapping[str, Any]) -> str:
    return str((body.get("metadata") or {}).get("name") or "")


def resolve(name: str, cluster: LiveCluster) -> tuple[str, Mapping[str, Any] | None, bool]:
    """The node ``name`` means, its NodeClaim (if any) and whether the Node exists."""
    nodes = {_name(d.body) for d in cluster.documents if d.body.get("kind") == "Node"}
    by_name = {_name(c): c for c in cluster.claims}
    by_node = {str((c.get("status") or {}).get("nodeName") or ""): c for c in cluster.claims}
    by_node.pop("", None)
    if name in nodes:
        return name, by_node.get(name) or by_name.get(name), True
    claim = by_name.get(name)
    if claim is not None:
        node = str((claim.get("status") or {}).get("nodeName") or "")
        return (node or name), claim, node in nodes
    return name, None, False


@dataclass
class WorkflowFacts:
    disruption: DisruptionStatus | None
    paused_all: bool
    paused_pools: list[str]
    error: str = ""


async def ask_temporal(args: argparse.Namespace) -> WorkflowFacts:
    """The DisruptionWorkflow's status and the provisioner's pause state; ``error`` (one
    line) says why not, instead of raising."""
    from temporalio.service import RPCError, RPCStatusCode

    from worker.running.connection import connect
    from workflows.disruption.workflow import DisruptionWorkflow
    from workflows.provisioner import ProvisionerWorkflow

    settings = temporal_from(args)
    try:
        client = await asyncio.wait_for(connect(settings), TEMPORAL_TIMEOUT_S)
    except UsageError as exc:
        return WorkflowFacts(None, False, [], str(exc))
    except TimeoutError:
        return WorkflowFacts(None, False, [], f"cannot reach Temporal at {settings.address}")
    workflow_id = contract.disruption_id(args.cluster)
    paused_all, paused_pools = False, []
    try:
        prov = await asyncio.wait_for(
            client.get_workflow_handle(contract.provisioner_id(args.cluster)).query(
                ProvisionerWorkflow.status
            ),
            TEMPORAL_TIMEOUT_S,
        )
        paused_all, paused_pools = prov.paused_all, list(prov.paused_pools)
    except (RPCError, TimeoutError):
        pass  # the disruption query below reports what is wrong
    try:
        status = await asyncio.wait_for(
            client.get_workflow_handle(workflow_id).query(DisruptionWorkflow.status),
            TEMPORAL_TIMEOUT_S,
        )
    except TimeoutError:
        why = f"workflow {workflow_id} did not answer in {TEMPORAL_TIMEOUT_S:.0f} s"
        return WorkflowFacts(None, paused_all, paused_pools, why)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND or "not found" in str(exc).lower():
            why = f"no workflow {workflow_id} (is `joinery worker` running for this cluster?)"
        else:
            why = f"workflow {workflow_id}: {exc}"
        return WorkflowFacts(None, paused_all, paused_pools, why)
    return WorkflowFacts(status, paused_all, paused_pools)


def explain(
    name: str,
    cluster: LiveCluster,
    result: RoundResult,
    facts: WorkflowFacts,
) -> X.Explanation:
    node, claim, exists = resolve(name, cluster)
    managed = next((m for m in result.inputs.cluster.managed if m.name == node), None)
    if exists:
        now = X.engine_now(result, node, facts.paused_all, facts.paused_pools)
    else:
        what = f"NodeClaim {_name(claim)} has no Node yet" if claim else "no such Node"
        now = X.Now(verdict=X.ABSENT, reason=f"not in the cluster ({what})")
    pool = managed.pool if managed else ""
    if not pool and claim:
        pool = str(
            ((claim.get("metadata") or {}).get("labels") or {}).get("karpenter.sh/nodepool", "")
        )
    return X.Explanation(
        node=node,
        nodeclaim=_name(claim)
        if claim
        else (managed.claim if managed and managed.claim != node else ""),
        nodepool=pool,
        now=now,
        last_round=X.last_round(facts.disruption, node, facts.error),
        budget=X.budget_of(result, pool) if pool else None,
        conditions=X.disruption_conditions(claim),
    )


def run(args: argparse.Namespace) -> int:
    from worker.cli.plan_command import load_instance_types

    types = load_instance_types(args.catalog) if args.catalog else []
    cluster = read_cluster(args.kubeconfig)
    if args.catalog:
        # The file is every pool's, in the zones of its EC2NodeClass's subnets (as
        # ``joinery plan`` reads it, ``worker.plan_inputs.plan_catalogs``).
        classes = {
            name: Document(body, f"EC2NodeClass {name}")
            for name, body in cluster.nodeclasses.items()
        }
        own = plan_catalogs.pool_catalogs(cluster.documents, classes, types, {})
    else:
        azure_plan.refuse_without_catalog(cluster.nodepools)
        types, own = ec2_instance_types(args, cluster)
    try:
        docs = [*cluster.documents, *cluster_state.nodeclass_documents(cluster.nodeclasses)]
        result = run_round(docs, types, datetime.now(UTC), own)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    facts = asyncio.run(ask_temporal(args))
    e = explain(args.node, cluster, result, facts)
    known_to_workflow = e.last_round.available and bool(e.last_round.outcome)
    if e.now.verdict == X.ABSENT and not e.nodeclaim and not known_to_workflow:
        raise UsageError(f"node {args.node}: not found (no Node or NodeClaim of that name)")
    if args.output == "json":
        print(json.dumps(X.to_dict(e), indent=2))
    else:
        print(X.to_text(e))
    if not e.last_round.available:
        print(
            one_line(f"joinery explain: workflow part unavailable: {e.last_round.error}"),
            file=sys.stderr,
        )
        return 2
    return 0
