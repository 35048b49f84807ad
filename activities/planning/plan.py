"""One provisioning round: the cluster and the catalog in, the NodeClaims to create out.

Names are chosen here (``<pool>-<5 chars>``, like Karpenter's generateName): random for
``joinery plan`` and disruption replacements, derived from the round for the provisioner
(activities.planning.provision), so a retried create finds the claim it already made.
"""

from __future__ import annotations

import secrets
import string
import time
from collections.abc import Callable, Mapping
from typing import Any

from activities.cloud.provider import CloudProvider
from activities.kubernetes.client import Kube
from activities.metrics import Counters
from activities.planning import cluster_state, ready_pools
from activities.planning.cluster_state import ClusterState
from activities.planning.types import PlannedNodeClaim, PlanOutcome
from models import labels as L
from models.instancetype import InstanceType
from models.nodepool import NodePool
from models.nodepool_hash import hash_annotations
from models.policies import MIN_VALUES_RELAXED_ANNOTATION, Policies
from models.requirements import Requirements
from models.resources import render
from scheduling.inputs import InputError, build_problem
from scheduling.problem import Problem
from scheduling.solver import PlannedClaim, Solver
from scheduling.solving.kept import KeptCatalog

ALPHABET = string.ascii_lowercase + string.digits


# Chooses the name of a round's ``index``-th new claim of ``pool``.
Namer = Callable[[str, int], str]


def claim_name(pool: str) -> str:
    return f"{pool}-{''.join(secrets.choice(ALPHABET) for _ in range(5))}"


def random_name(pool: str, index: int) -> str:
    return claim_name(pool)


def pool_catalogs(
    cloud: CloudProvider, pools: list[NodePool], classes: Mapping[str, Mapping[str, Any]]
) -> tuple[list[InstanceType], dict[str, list[InstanceType]]]:
    """Each pool's own catalog, as Karpenter asks the cloud provider for each NodePool's
    instance types: its node class's view (EC2: offerings in zones without its subnets are
    unavailable; allocatable after its AMI family's and kubelet's reserve, maxPods, block
    devices). Returns the round's catalog and the pools' own (pool name -> types).

    The provider hands out one list per distinct view (EC2's ``InstanceTypeProvider.list``
    keys its builds by what changes the numbers), so pools whose NodeClasses see alike share a
    list, and one NodeClass gives the round one catalog, as before. A pool whose NodeClass
    is not in the cluster sees the provider's catalog without a NodeClass (the round's
    catalog then); one whose NodeClass is not Ready (left out of rounds by ``ready_pools``
    before this is asked) can launch nothing."""
    views: dict[str, list[InstanceType]] = {}
    own: dict[str, list[InstanceType]] = {}
    for pool in pools:
        ref = pool.spec.template.spec.node_class_ref.name
        if ref not in classes:
            continue
        view = views.get(ref)
        if view is None:
            if ready_pools.not_ready(cloud, classes[ref]) is not None:
                view = []
            else:
                view = cloud.instance_types(cloud.nodeclass_kind.parse(classes[ref]))
            views[ref] = view
        own[pool.name] = view
    if own and len(own) == len(pools):
        return next(iter(own.values())), own
    return cloud.instance_types(), own


def instance_types(
    cloud: CloudProvider, pools: list[NodePool], classes: dict[str, dict[str, Any]]
) -> list[InstanceType]:
    """One catalog for every pool: the disruption round's catalog for a pool with no view of
    its own (plans, node prices and drift give each pool its own: ``pool_catalogs``); zones
    without subnets are unavailable.

    A NodeClass that is not Ready is no view of it (``ready_pools``): with no subnet, it sees
    every offering unavailable. Of the Ready ones, the first to name a type gives it.
    With one NodeClass, its list itself: the provider hands out the same list while the
    catalog is unchanged, and what the solver keeps from round to round is kept per list
    (``scheduling.solving.kept``)."""
    out: dict[str, InstanceType] = {}
    seen: set[str] = set()
    lists: list[list[InstanceType]] = []
    for pool in pools:
        ref = pool.spec.template.spec.node_class_ref.name
        if ref in seen or ref not in classes:
            continue
        seen.add(ref)
        if ready_pools.not_ready(cloud, classes[ref]) is not None:
            continue
        listed = cloud.instance_types(cloud.nodeclass_kind.parse(classes[ref]))
        lists.append(listed)
        for it in listed:
            out.setdefault(it.name, it)
    if out and len(lists) == 1 and len(out) == len(lists[0]):
        return lists[0]  # the same types in the same order as the merge would give
    return list(out.values()) if out else cloud.instance_types()


def disruption_catalogs(
    cloud: CloudProvider, pools: list[NodePool], classes: dict[str, dict[str, Any]]
) -> tuple[list[InstanceType], dict[str, list[InstanceType]]]:
    """What a disruption round reads: each pool's own catalog (``pool_catalogs``), for its
    plan, its replacements, its nodes' prices and their drift, and the merged one
    (``instance_types``) for a pool with no view of its own (its NodeClass is not Ready)."""
    merged = instance_types(cloud, pools, classes)
    _, own = pool_catalogs(cloud, pools, classes)
    return merged, {pool: listed for pool, listed in own.items() if listed}


def owner_references(pool: NodePool) -> list[dict[str, Any]]:
    """As Karpenter's: the claim belongs to its NodePool, so Kubernetes' garbage collector
    deletes (and the lifecycle drains) a deleted pool's claims. A pool read from a file has
    no UID, and a reference needs one."""
    if not pool.metadata.uid:
        return []
    return [
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "name": pool.name,
            "uid": pool.metadata.uid,
            "blockOwnerDeletion": True,
        }
    ]


def body_for(
    claim: PlannedClaim, pool: NodePool, name: str, annotations: Mapping[str, str] | None = None
) -> dict[str, Any]:
    tmpl = pool.spec.template
    spec: dict[str, Any] = {
        "nodeClassRef": tmpl.spec.node_class_ref.to_wire(),
        "requirements": claim.requirements.to_list(),
        "resources": {"requests": render(claim.requests)},
        "expireAfter": tmpl.spec.expire_after,
    }
    if tmpl.spec.taints:
        spec["taints"] = [t.to_wire() for t in tmpl.spec.taints]
    if tmpl.spec.startup_taints:
        spec["startupTaints"] = [t.to_wire() for t in tmpl.spec.startup_taints]
    if tmpl.spec.termination_grace_period:
        spec["terminationGracePeriod"] = tmpl.spec.termination_grace_period
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {**tmpl.metadata.labels, L.NODEPOOL: pool.name},
        # The template hash Karpenter stamps, so drift is told from a pool change.
        "annotations": {
            **tmpl.metadata.annotations,
            **hash_annotations(pool),
            # Karpenter marks every claim its scheduler makes, relaxed or not.
            MIN_VALUES_RELAXED_ANNOTATION: "true" if claim.min_values_relaxed else "false",
            **(annotations or {}),
        },
    }
    owners = owner_references(pool)
    if owners:
        metadata["ownerReferences"] = owners
    return {"metadata": metadata, "spec": spec}


def planned_nodeclaim(
    claim: PlannedClaim,
    pool: NodePool,
    name: str | None = None,
    annotations: Mapping[str, str] | None = None,
) -> PlannedNodeClaim:
    """A solver claim as the NodeClaim to create, named now (so a retried create finds it)."""
    name = name or claim_name(claim.nodepool)
    return PlannedNodeClaim(
        name=name,
        nodepool=claim.nodepool,
        body=body_for(claim, pool, name, annotations),
        instance_types=[it.name for it in claim.instance_types[:20]],
        capacity_types=list(claim.capacity_types),
        zones=list(claim.zones),
        price=claim.price,
        pods=len(claim.pods),
    )


def _key(pod: str) -> tuple[str, str]:
    namespace, _, name = pod.partition("/")
    return namespace, name


def effective_zones(problem: Problem) -> dict[str, int]:
    """Pending pods by the zone their own constraints leave (node selector, required
    affinity, volumes) among the catalog's zones: a zone, ``flexible`` or ``none``, as
    ``karpenter_scheduler_pending_pods_by_effective_zone_count`` counts them."""
    zones = {o.zone for t in problem.instance_types for o in t.offerings}
    out: dict[str, int] = {}
    for pod in problem.pending:
        allowed = {z for z in zones if _zone_ok(pod.node_selector, z)}
        if pod.required_terms:
            allowed = {z for z in allowed if any(_zone_ok(t, z) for t in pod.required_terms)}
        volume = problem.volume_requirements.get(f"{pod.namespace}/{pod.name}")
        if volume is not None:
            allowed = {z for z in allowed if _zone_ok(volume, z)}
        label = next(iter(allowed)) if len(allowed) == 1 else ("flexible" if allowed else "none")
        out[label] = out.get(label, 0) + 1
    return out


def _zone_ok(requirements: Requirements, zone: str) -> bool:
    req = requirements.get(L.ZONE)
    return req is None or bool(req.has(zone))


def plan(
    kube: Kube,
    cloud: CloudProvider,
    paused_pools: frozenset[str] = frozenset(),
    counters: Counters | None = None,
    policies: Policies | None = None,
) -> PlanOutcome:
    state = cluster_state.read(
        kube, paused_pools, nodeclass_resource=cloud.nodeclass_kind.resource, managed_only=True
    )
    return plan_state(state, cloud, counters, policies=policies)


def plan_state(
    state: ClusterState,
    cloud: CloudProvider,
    counters: Counters | None = None,
    *,
    name: Namer = random_name,
    annotations: Mapping[str, str] | None = None,
    kept: KeptCatalog | None = None,
    policies: Policies | None = None,
) -> PlanOutcome:
    """The claims to create for ``state``'s pending pods, named by ``name`` and carrying
    ``annotations``; with ``kept``, the solver starts from what the last round kept;
    ``policies``: Karpenter's scheduling policies (default: its defaults)."""
    if state.pending or state.displaced:
        ready_pools.leave_out_unready(cloud, state)
    if not state.nodepools or not (state.pending or state.displaced):
        why = (
            "no NodePool can be used (each is invalid, paused, being deleted or has an "
            f"{cloud.nodeclass_kind.kind} that is not ready)"
        )
        valid = [pod for pod in state.uids if pod not in state.invalid_pods]
        return PlanOutcome(
            pending_pods=state.pending,
            skipped=state.skipped,
            invalid_pods=state.invalid_pods,
            unschedulable={pod: why for pod in valid},
            pod_uids=dict(state.uids),
        )
    types, own = pool_catalogs(cloud, state.nodepools, state.nodeclasses)
    try:
        parsed = build_problem(state.documents, types, own, policies)
    except InputError as exc:
        return PlanOutcome(
            pending_pods=state.pending,
            skipped=[*state.skipped, str(exc)],
            invalid_pods=state.invalid_pods,
            pod_uids=dict(state.uids),
        )
    started = time.perf_counter()
    scheduling_id = secrets.token_hex(4)
    if counters is not None:
        counters.scheduling_started("provisioner", scheduling_id)
    try:
        if kept is None:
            result = Solver(parsed.problem).solve()
        else:
            with kept.solving(parsed.problem) as catalog:
                result = Solver(parsed.problem, catalog=catalog).solve()
    finally:
        if counters is not None:
            counters.scheduling_finished("provisioner", scheduling_id)
    if counters is not None:
        counters.scheduling(
            "provisioner",
            time.perf_counter() - started,
            len(parsed.problem.pending),
            len(result.unschedulable),
        )
        placed = [p for c in result.claims for p in c.pods]
        placed += [p for pods in result.existing.values() for p in pods]
        counters.pods_decided(
            [(p.namespace, p.name) for p in placed],
            [_key(p) for p in result.unschedulable],
            ignored=len(state.invalid_pods),
            zones=effective_zones(parsed.problem),
        )
    pools = {p.name: p for p in state.nodepools}
    claims = [
        planned_nodeclaim(c, pools[c.nodepool], name(c.nodepool, i), annotations)
        for i, c in enumerate(result.claims)
    ]
    told = [*result.unschedulable, *state.invalid_pods]
    in_flight = {n.name for n in parsed.problem.nodes if n.in_flight}
    nominated = {
        f"{p.namespace}/{p.name}": f"nodeclaim/{claim.name}"
        for claim, planned in zip(claims, result.claims, strict=True)
        for p in planned.pods
    }
    for node, pods in result.existing.items():
        target = f"nodeclaim/{node}" if node in in_flight else f"node/{node}"
        nominated.update((f"{p.namespace}/{p.name}", target) for p in pods)
    uids = {f"{p.namespace}/{p.name}": p.uid for p in parsed.problem.pending}
    onto_in_flight = sum(len(pods) for n, pods in result.existing.items() if n in in_flight)
    return PlanOutcome(
        pod_uids={
            **{pod: uids.get(pod, "") for pod in nominated},
            **{pod: state.uids[pod] for pod in told if pod in state.uids},
        },
        nominated=nominated,
        claims=claims,
        pending_pods=state.pending,
        unschedulable=dict(result.unschedulable),
        skipped=state.skipped + parsed.warnings,
        invalid_pods=state.invalid_pods,
        onto_in_flight=onto_in_flight,
        onto_nodes=sum(len(pods) for pods in result.existing.values()) - onto_in_flight,
    )
