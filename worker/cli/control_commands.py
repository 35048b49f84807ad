"""Operator controls: ``joinery pause|resume|disrupt|status``, through Temporal updates and
queries on the provisioner and NodeClaim workflows (state lives in those workflows, so it
survives worker restarts)."""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict
from typing import Any

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from models import contract
from worker.running.connection import connect
from worker.running.settings import add_temporal_args, temporal_from
from worker.usage import UsageError
from workflows.disruption.state import DisruptionStatus
from workflows.disruption.workflow import DisruptionWorkflow
from workflows.garbage.state import GarbageCollectionStatus
from workflows.garbage.workflow import GarbageCollectionWorkflow
from workflows.nodeclaim.state import DisruptRequest, NodeClaimStatus
from workflows.nodeclaim.workflow import NodeClaimWorkflow
from workflows.provisioner import PauseRequest, ProvisionerStatus, ProvisionerWorkflow


def register(sub: Any) -> None:
    p = sub.add_parser("pause", help="stop creating NodeClaims (for one NodePool or all)")
    add_temporal_args(p)
    p.add_argument("--nodepool", default=None, help="only this NodePool (default: all of them)")
    p.set_defaults(func=run_pause)
    p = sub.add_parser("resume", help="undo pause")
    add_temporal_args(p)
    p.add_argument("--nodepool", default=None, help="only this NodePool (default: all of them)")
    p.set_defaults(func=run_resume)
    p = sub.add_parser("disrupt", help="drain and terminate one NodeClaim now")
    add_temporal_args(p)
    p.add_argument("nodeclaim", help="the NodeClaim to drain and replace")
    p.add_argument("--reason", default="Disrupted", help="DisruptionReason (one word)")
    p.add_argument("--message", default="", help="why, for the NodeClaim's condition")
    p.set_defaults(func=run_disrupt)
    p = sub.add_parser("status", help="phase, conditions and timings (one NodeClaim or all)")
    add_temporal_args(p)
    p.add_argument(
        "nodeclaim", nargs="?", help="one NodeClaim's workflow (default: the cluster's workflows)"
    )
    p.add_argument("-o", "--output", choices=("text", "json"), default="text", help="output format")
    p.set_defaults(func=run_status)


def _missing(exc: RPCError) -> bool:
    return exc.status == RPCStatusCode.NOT_FOUND or "not found" in str(exc).lower()


def _rejected(exc: WorkflowUpdateFailedError) -> str:
    cause = exc.cause
    return str(getattr(cause, "message", None) or cause or exc)


async def _client(args: argparse.Namespace) -> Client:
    return await connect(temporal_from(args))


async def _pause(args: argparse.Namespace, resume: bool) -> str:
    client = await _client(args)
    handle = client.get_workflow_handle(contract.provisioner_id(args.cluster))
    update = ProvisionerWorkflow.resume if resume else ProvisionerWorkflow.pause
    try:
        return await handle.execute_update(update, PauseRequest(args.nodepool))
    except WorkflowUpdateFailedError as exc:
        raise UsageError(_rejected(exc)) from None
    except RPCError as exc:
        if _missing(exc):
            raise UsageError(
                f"no provisioner for cluster {args.cluster} (is `joinery worker` running?)"
            ) from None
        raise UsageError(str(exc)) from None


def run_pause(args: argparse.Namespace) -> int:
    print(asyncio.run(_pause(args, resume=False)))
    return 0


def run_resume(args: argparse.Namespace) -> int:
    print(asyncio.run(_pause(args, resume=True)))
    return 0


async def _disrupt(args: argparse.Namespace) -> str:
    client = await _client(args)
    handle = client.get_workflow_handle(contract.nodeclaim_id(args.cluster, args.nodeclaim))
    try:
        return await handle.execute_update(
            NodeClaimWorkflow.disrupt, DisruptRequest(args.reason, args.message)
        )
    except WorkflowUpdateFailedError as exc:
        raise UsageError(_rejected(exc)) from None
    except RPCError as exc:
        if _missing(exc) or "already completed" in str(exc).lower():
            raise UsageError(f"no running workflow for NodeClaim {args.nodeclaim}") from None
        raise UsageError(str(exc)) from None


def run_disrupt(args: argparse.Namespace) -> int:
    print(asyncio.run(_disrupt(args)))
    return 0


def format_claim(s: NodeClaimStatus) -> str:
    lines = [f"NodeClaim {s.name}: {s.phase}"]
    if s.nodepool:
        lines.append(f"  nodepool:  {s.nodepool}")
    if s.instance_type:
        lines.append(f"  instance:  {s.instance_type} {s.capacity_type} {s.zone} ({s.provider_id})")
    if s.node_name:
        lines.append(f"  node:      {s.node_name}")
    if s.ending_reason:
        lines.append(f"  ending:    {s.ending_reason} {s.ending_message}".rstrip())
    if s.waiting_for:
        lines.append(f"  waiting:   {s.waiting_for}")
    for pod in s.blocked:
        lines.append(f"  blocked:   {pod}")
    for phase, at in s.timings.items():
        lines.append(f"  {phase + ':':<26} {at}")
    return "\n".join(lines)


def format_disruption(s: DisruptionStatus | None) -> str:
    if s is None:
        return "Disruption: no workflow"
    text = (
        f"Disruption {s.cluster}: {s.phase}; {s.rounds} round(s), {s.commands_done} command(s)"
        f" done, {s.commands_failed} undone"
    )
    text += f"\n  last: {s.last_summary}" if s.last_summary else ""
    return text + (f"\n  last acted: {s.last_action}" if s.last_action else "")


async def _optional_status(client: Client, workflow_id: str, query: Any) -> Any:
    """A cluster workflow's status, or None when the worker was told not to run it."""
    try:
        return await client.get_workflow_handle(workflow_id).query(query)
    except RPCError as exc:
        if _missing(exc):
            return None
        raise


def format_garbage_collection(s: GarbageCollectionStatus | None) -> str:
    if s is None:
        return "Garbage collection: no workflow"
    removed = ", ".join(f"{n} by {step}" for step, n in sorted(s.removed.items())) or "nothing"
    text = f"Garbage collection {s.cluster}: {s.rounds} round(s), removed {removed}"
    return text + (f"\n  last: {s.last_summary}" if s.last_summary else "")


def format_provisioner(s: ProvisionerStatus) -> str:
    paused = "all NodePools" if s.paused_all else (", ".join(s.paused_pools) or "none")
    text = f"Provisioner {s.cluster}: paused: {paused}; {s.rounds} round(s), {s.created} created"
    return text + (f"\n  last: {s.last_result}" if s.last_result else "")


async def _status(args: argparse.Namespace) -> str:
    client = await _client(args)
    try:
        if args.nodeclaim:
            handle = client.get_workflow_handle(contract.nodeclaim_id(args.cluster, args.nodeclaim))
            claim = await handle.query(NodeClaimWorkflow.status)
            return json.dumps(asdict(claim)) if args.output == "json" else format_claim(claim)
        prov = await client.get_workflow_handle(contract.provisioner_id(args.cluster)).query(
            ProvisionerWorkflow.status
        )
        disruption: DisruptionStatus | None = await _optional_status(
            client, contract.disruption_id(args.cluster), DisruptionWorkflow.status
        )
        collecting: GarbageCollectionStatus | None = await _optional_status(
            client, contract.garbage_collection_id(args.cluster), GarbageCollectionWorkflow.status
        )
        claims: list[NodeClaimStatus] = []
        query = (
            f"WorkflowType = '{contract.NODECLAIM_WORKFLOW}' AND ExecutionStatus = 'Running'"
            f" AND TaskQueue = '{temporal_from(args).task_queue}'"
        )
        async for wf in client.list_workflows(query):
            claims.append(await client.get_workflow_handle(wf.id).query(NodeClaimWorkflow.status))
    except RPCError as exc:
        if _missing(exc):
            what = f"NodeClaim {args.nodeclaim}" if args.nodeclaim else f"cluster {args.cluster}"
            raise UsageError(f"no workflow for {what}") from None
        raise UsageError(str(exc)) from None
    if args.output == "json":
        return json.dumps(
            {
                "provisioner": asdict(prov),
                "disruption": asdict(disruption) if disruption else None,
                "garbageCollection": asdict(collecting) if collecting else None,
                "nodeClaims": [asdict(c) for c in claims],
            }
        )
    rows = [
        format_provisioner(prov),
        format_disruption(disruption),
        format_garbage_collection(collecting),
        "",
    ]
    rows.append(f"{'NODECLAIM':<28} {'PHASE':<26} {'TYPE':<14} {'CAPACITY':<10} {'ZONE':<12} NODE")
    for c in sorted(claims, key=lambda c: c.name):
        rows.append(
            f"{c.name:<28} {c.phase:<26} {c.instance_type or '-':<14} "
            f"{c.capacity_type or '-':<10} {c.zone or '-':<12} {c.node_name or '-'}"
        )
    return "\n".join(rows)


def run_status(args: argparse.Namespace) -> int:
    print(asyncio.run(_status(args)))
    return 0
