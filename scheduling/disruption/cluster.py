"""What a disruption round needs to know about a running cluster, read from its objects.

``scheduling.inputs.build_problem`` already turns the manifests into the scheduling Problem
(pools, nodes with their bound pods, pending pods). This module reads the rest from the same
documents: which nodes are managed and by which claim, their prices, timestamps and
annotations, the pods' annotations and health, and the PodDisruptionBudgets. Errors name the
document and field in one line (``InputError``), like the rest of the input path.

A node is priced from its own pool's catalog (``Problem.catalog_of``), as Karpenter prices a
candidate from its NodeClaim's instance type and offering as its NodePool and NodeClass see
them, and drift compares a claim with that same catalog (``ClusterView.types_of``): with two
EC2NodeClasses that differ, a merged catalog would price a node, or judge its type offered,
by the other NodeClass's view.

EC2NodeClass documents (when the caller passes them) give each pool's class facts for the
AWS provider's drift reasons (``nodeclass_drift_reasons``); a pool whose class is not among them
gets none of those verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from models import labels as L
from models.conditions import INSTANCE_TERMINATING
from models.instancetype import InstanceType
from models.nodepool import NodePool
from scheduling.disruption.aks_drift_reasons import KIND as AKS_NODECLASS_KIND
from scheduling.disruption.aks_drift_reasons import AKSNodeClassFacts, read_aks_nodeclass
from scheduling.disruption.nodeclass_drift_reasons import KIND as NODECLASS_KIND
from scheduling.disruption.nodeclass_drift_reasons import NodeClassFacts, read_nodeclass
from scheduling.disruption.pdb import Pdb, PdbError, parse_pdb
from scheduling.disruption.types import ManagedNode
from scheduling.inputs import Document, InputError, flatten
from scheduling.pods import Pod
from scheduling.problem import Problem

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# A pool's node class facts: the EC2NodeClass's or the AKSNodeClass's.
ClassFacts = NodeClassFacts | AKSNodeClassFacts


def parse_time(value: Any, where: str) -> datetime | None:
    """An RFC 3339 timestamp (UTC when it names no zone), None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{where}: not an RFC 3339 time: {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class PodFacts:
    """What the scheduling view of a pod leaves out and disruption needs."""

    annotations: Mapping[str, str]
    started: datetime | None
    healthy: bool
    mirror: bool


@dataclass(frozen=True)
class ClaimFacts:
    """The NodeClaim behind a managed node (or the node itself when it has none)."""

    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    expire_after: str | None
    image_id: str = ""  # status.imageID: the AMI its instance was launched from
    kubelet_version: str = ""  # its Node's status.nodeInfo.kubeletVersion


@dataclass
class ClusterView:
    pools: dict[str, NodePool]
    managed: list[ManagedNode]
    # Node name → the pods the Problem has bound to it (all of them, DaemonSet pods too).
    node_pods: dict[str, list[Pod]]
    node_annotations: dict[str, Mapping[str, str]]
    claims: dict[str, ClaimFacts]  # node name → its claim
    pods: dict[str, PodFacts]  # pod key → facts
    pdbs: list[Pdb] = field(default_factory=list)
    # Pool name → its catalog by type name (pools on one catalog share one mapping).
    catalogs: dict[str, Mapping[str, InstanceType]] = field(default_factory=dict)
    # Pool name → the facts of the node class its template refers to (when given).
    nodeclasses: dict[str, ClassFacts] = field(default_factory=dict)

    def types_of(self, pool: str) -> Mapping[str, InstanceType]:
        """The instance types the pool's nodes are priced from and checked for drift against."""
        return self.catalogs.get(pool, {})

    def nodeclass_of(self, pool: str) -> ClassFacts | None:
        """The pool's node class facts; None when its class is not among the inputs."""
        return self.nodeclasses.get(pool)


def pool_type_maps(problem: Problem) -> dict[str, Mapping[str, InstanceType]]:
    """Each pool's catalog by type name; one mapping per distinct catalog (by identity), so
    one NodeClass costs one mapping, as the single merged catalog did."""
    by_list: dict[int, Mapping[str, InstanceType]] = {}
    out: dict[str, Mapping[str, InstanceType]] = {}
    for pool in problem.nodepools:
        types = problem.catalog_of(pool.name)
        known = by_list.get(id(types))
        if known is None:
            known = by_list[id(types)] = {it.name: it for it in types}
        out[pool.name] = known
    return out


def _meta(body: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = body.get("metadata") or {}
    return meta if isinstance(meta, Mapping) else {}


def _strings(raw: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def _instance_terminating(status: object) -> bool:
    """The claim's ``InstanceTerminating`` condition is True."""
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return any(
        isinstance(c, Mapping)
        and c.get("type") == INSTANCE_TERMINATING
        and c.get("status") == "True"
        for c in conditions or []
    )


def _ready(body: Mapping[str, Any]) -> bool:
    """A Node is Ready unless its status says otherwise (hand-written inputs often omit it)."""
    for cond in (body.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            return str(cond.get("status")) == "True"
    return True


def _pod_facts(d: Document) -> tuple[str, PodFacts]:
    meta = _meta(d.body)
    status = d.body.get("status") or {}
    status = status if isinstance(status, Mapping) else {}
    annotations = _strings(meta.get("annotations"))
    key = f"{meta.get('namespace') or 'default'}/{meta.get('name') or meta.get('generateName')}"
    phase = status.get("phase")
    ready = True
    for cond in status.get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            ready = str(cond.get("status")) == "True"
    spec = d.body.get("spec") or {}
    bound = bool(isinstance(spec, Mapping) and spec.get("nodeName"))
    healthy = bound and not meta.get("deletionTimestamp") and phase in (None, "Running") and ready
    owners = meta.get("ownerReferences") or []
    mirror = MIRROR_ANNOTATION in annotations or any(
        isinstance(o, Mapping) and o.get("kind") == "Node" for o in owners
    )
    started = parse_time(status.get("startTime"), f"{d.label()}: status.startTime")
    return key, PodFacts(annotations, started, healthy, mirror)


def _price(types: Mapping[str, InstanceType], labels: Mapping[str, str]) -> float | None:
    it = types.get(labels.get(L.INSTANCE_TYPE, ""))
    if it is None:
        return None
    zone, ct = labels.get(L.ZONE), labels.get(L.CAPACITY_TYPE)
    prices = [
        o.price
        for o in it.offerings
        if (zone is None or o.zone == zone) and (ct is None or o.capacity_type == ct)
    ]
    return min(prices) if prices else None


def read_cluster(documents: Iterable[Document], problem: Problem) -> ClusterView:
    """The disruption view of the cluster the documents describe, each managed node priced
    from its own pool's catalog."""
    pools = {p.name: p for p in problem.nodepools}
    catalogs = pool_type_maps(problem)
    nodes: dict[str, Document] = {}
    claims: list[Document] = []
    pods: dict[str, PodFacts] = {}
    pdbs: list[Pdb] = []
    classes: dict[tuple[str, str], ClassFacts] = {}
    for d in flatten(documents):
        kind = d.body.get("kind")
        if kind == "Node":
            nodes[str(_meta(d.body).get("name"))] = d
        elif kind == "NodeClaim":
            claims.append(d)
        elif kind == "Pod":
            key, facts = _pod_facts(d)
            pods[key] = facts
        elif kind == "PodDisruptionBudget":
            try:
                pdbs.append(parse_pdb(d.body))
            except PdbError as exc:
                raise InputError(f"{d.label()}: {exc}") from None
        elif kind == NODECLASS_KIND:
            nodeclass = read_nodeclass(d)
            classes[(NODECLASS_KIND, nodeclass.name)] = nodeclass
        elif kind == AKS_NODECLASS_KIND:
            aks = read_aks_nodeclass(d)
            classes[(AKS_NODECLASS_KIND, aks.name)] = aks

    by_provider = {
        str((d.body.get("spec") or {}).get("providerID")): name
        for name, d in nodes.items()
        if (d.body.get("spec") or {}).get("providerID")
    }
    claim_of: dict[str, Document] = {}
    for d in claims:
        status = d.body.get("status") or {}
        node = status.get("nodeName") if isinstance(status, Mapping) else None
        if node not in nodes and isinstance(status, Mapping):
            node = by_provider.get(str(status.get("providerID")))
        if node in nodes:
            claim_of[str(node)] = d

    node_pods = {n.name: list(n.pods) for n in problem.nodes if not n.in_flight}
    managed: list[ManagedNode] = []
    claim_facts: dict[str, ClaimFacts] = {}
    annotations: dict[str, Mapping[str, str]] = {}
    for name in sorted(nodes):
        d = nodes[name]
        meta = _meta(d.body)
        labels = _strings(meta.get("labels"))
        pool = labels.get(L.NODEPOOL)
        if pool not in pools:
            continue
        claim = claim_of.get(name)
        cmeta = _meta(claim.body) if claim is not None else meta
        where = claim.label() if claim is not None else d.label()
        created = parse_time(cmeta.get("creationTimestamp"), f"{where}: metadata.creationTimestamp")
        cstatus = (claim.body.get("status") or {}) if claim is not None else {}
        last_event = parse_time(
            cstatus.get("lastPodEventTime") if isinstance(cstatus, Mapping) else None,
            f"{where}: status.lastPodEventTime",
        )
        cspec = (claim.body.get("spec") or {}) if claim is not None else {}
        expire = cspec.get("expireAfter") if isinstance(cspec, Mapping) else None
        image = cstatus.get("imageID") if isinstance(cstatus, Mapping) else None
        claim_labels = _strings(cmeta.get("labels")) if claim is not None else labels
        claim_facts[name] = ClaimFacts(
            name=str(cmeta.get("name") or name),
            labels={**labels, **claim_labels},
            annotations=_strings(cmeta.get("annotations")),
            expire_after=str(expire) if expire is not None else None,
            image_id=str(image or ""),
            kubelet_version=_kubelet_version(d.body),
        )
        annotations[name] = _strings(meta.get("annotations"))
        managed.append(
            ManagedNode(
                name=name,
                claim=claim_facts[name].name,
                pool=str(pool),
                instance_type=labels.get(L.INSTANCE_TYPE, ""),
                zone=labels.get(L.ZONE, ""),
                capacity_type=labels.get(L.CAPACITY_TYPE, ""),
                price=_price(catalogs[str(pool)], labels),
                initialized=labels.get(L.NODE_INITIALIZED) == "true",
                deleting=bool(meta.get("deletionTimestamp") or cmeta.get("deletionTimestamp")),
                ready=_ready(d.body),
                created=created,
                last_pod_event=last_event,
                instance_terminating=_instance_terminating(cstatus),
            )
        )
    return ClusterView(
        pools=pools,
        managed=managed,
        node_pods=node_pods,
        node_annotations=annotations,
        claims=claim_facts,
        pods=pods,
        pdbs=pdbs,
        catalogs=catalogs,
        nodeclasses=_pool_classes(pools, classes),
    )


def _pool_classes(
    pools: Mapping[str, NodePool], classes: Mapping[tuple[str, str], ClassFacts]
) -> dict[str, ClassFacts]:
    """Each pool whose template refers to one of ``classes`` (by kind and name) → that
    class's facts."""
    out: dict[str, ClassFacts] = {}
    for name, pool in pools.items():
        ref = pool.spec.template.spec.node_class_ref
        facts = classes.get((ref.kind, ref.name))
        if facts is not None:
            out[name] = facts
    return out


def _kubelet_version(node: Mapping[str, Any]) -> str:
    status = node.get("status") or {}
    info = status.get("nodeInfo") if isinstance(status, Mapping) else None
    version = info.get("kubeletVersion") if isinstance(info, Mapping) else None
    return str(version or "")
