"""Turn decoded Kubernetes manifests into a Problem (no I/O: documents are already parsed).

Errors name the document and field in one line (``InputError``); kinds the planner does not
use are skipped with a warning, as ``kubectl apply`` users would expect of a what-if tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from models import labels as L
from models.errors import field_error
from models.instancetype import InstanceType
from models.nodeclaim import NodeClaim
from models.nodepool import NodePool
from models.policies import Policies
from models.requirements import IN, Requirement, Requirements
from models.resources import Resources, parse_resources
from scheduling.going_away import claim_going_away, going_away_nodes, reschedulable
from scheduling.pods import Pod, PodError, SpecMemo, parse_pod
from scheduling.preferences import ignore_preferences
from scheduling.problem import NodeInfo, Problem
from scheduling.schemas import shape_error
from scheduling.taints import Taint
from scheduling.volumes import csinode_limits, pod_volumes


class InputError(ValueError):
    """Invalid input: one line naming the document and the field."""


@dataclass
class Document:
    """A decoded manifest and where it came from (for error messages)."""

    body: Mapping[str, Any]
    where: str  # e.g. "pods.yaml document 3"
    # What ``flatten`` made of it, once it found nothing wrong: a disruption round flattens
    # the same documents twice (the planner's view, then its own).
    flat: list[Document] | None = field(default=None, init=False, repr=False, compare=False)
    # What ``build_problem`` made of it that depends on the document alone (a Pod, a
    # NodeClaim's parts): a caller that keeps the Document between readings (the
    # provisioner keeps one per object version) has it parsed once.
    parsed: object = field(default=None, init=False, repr=False, compare=False)

    def label(self) -> str:
        meta = self.body.get("metadata") or {}
        name = meta.get("name") if isinstance(meta, Mapping) else None
        kind = self.body.get("kind", "?")
        return f"{self.where} ({kind} {name})" if name else f"{self.where} ({kind})"


@dataclass
class Parsed:
    problem: Problem
    warnings: list[str] = field(default_factory=list)


def overheads_key(runtime_overheads: Mapping[str, Resources] | None) -> str:
    """Equal for equal RuntimeClass overheads: a kept Pod parse is reused only under them."""
    return repr(sorted((k, sorted(v.items())) for k, v in (runtime_overheads or {}).items()))


def parsed_pod(
    doc: Document,
    runtime_overheads: Mapping[str, Resources] | None = None,
    memo: SpecMemo | None = None,
    ov_key: str | None = None,
) -> Pod:
    """``parse_pod`` of the document, kept on it (with the overheads it was parsed under).

    The Pod handed out is shared by every reading of the document: callers never change it
    (``build_problem`` puts a copy pending when its node is going away)."""
    key = overheads_key(runtime_overheads) if ov_key is None else ov_key
    kept = doc.parsed
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == key:
        pod: Pod = kept[1]
        return pod
    pod = parse_pod(doc.body, runtime_overheads, memo)
    doc.parsed = (key, pod)
    return pod


@dataclass(frozen=True, slots=True)
class ClaimParts:
    """What an in-flight NodeClaim's document says, parsed: all but the catalog's part."""

    claim: NodeClaim
    labels: dict[str, str]
    requirements: Requirements  # the claim's requirements narrowed by its labels
    instance_types: Requirement
    taints: tuple[Taint, ...]
    allocatable: Resources
    capacity: Resources
    # The NodeInfo the claim made in its last reading, with the catalog it was made under:
    # an unchanged claim is the same node from one reading to the next, so what a solver
    # keeps for a node (``CatalogCache.node_facts``) answers again. Never changed once made.
    node: list[tuple[list[InstanceType], NodeInfo]] = field(
        default_factory=list, compare=False, repr=False
    )
    # That node with the pods bound to it in the last reading (``_with_pods``).
    bound: list[tuple[NodeInfo, list[Pod], NodeInfo]] = field(
        default_factory=list, compare=False, repr=False
    )


# What a NodeClaim's requirements and labels give, before its own hostname: a burst's claims
# share them (one pool, one shape), so one reading works them out once (see ``claim_parts``).
SharedClaimParts = tuple[Requirements, dict[str, str], Requirements, Requirement]


def claim_parts(
    doc: Document,
    shared: dict[tuple[object, ...], SharedClaimParts] | None = None,
) -> ClaimParts:
    """The NodeClaim's parse, kept on the document; raises ValidationError / InputError.

    ``shared`` (one per reading) holds what claims with the same requirements and labels
    have in common: the requirements, the labels they imply and the two narrowed together;
    each claim then adds only its hostname (intersecting is order-free, and the keys come
    in the order a claim's own parse puts them)."""
    kept = doc.parsed
    if isinstance(kept, ClaimParts):
        return kept
    claim = NodeClaim.model_validate(doc.body)
    key = (
        tuple((r.key, r.operator, tuple(r.values), r.min_values) for r in claim.spec.requirements),
        tuple(claim.metadata.labels.items()),
    )
    common = None if shared is None else shared.get(key)
    if common is None:
        reqs = claim.requirements()
        base_labels = {**claim.metadata.labels, **reqs.labels()}
        common = (
            reqs,
            base_labels,
            reqs.with_requirements(Requirements.from_labels(base_labels).values()),
            reqs.get_or_exists(L.INSTANCE_TYPE),
        )
        if shared is not None:
            shared[key] = common
    _reqs, base_labels, narrowed, instance_types = common
    labels = dict(base_labels)
    if L.HOSTNAME not in labels:
        labels[L.HOSTNAME] = claim.name
        narrowed = narrowed.with_requirements(Requirements.from_labels({L.HOSTNAME: claim.name}))
    try:
        alloc = parse_resources(claim.status.allocatable)
        cap = parse_resources(claim.status.capacity)
    except ValueError as exc:
        raise InputError(f"{doc.label()}: status.allocatable.{exc}") from None
    parts = ClaimParts(
        claim=claim,
        labels=labels,
        requirements=narrowed,
        instance_types=instance_types,
        taints=tuple(Taint(t.key, t.value or "", t.effect) for t in claim.spec.taints),
        allocatable=alloc,
        capacity=cap,
    )
    doc.parsed = parts
    return parts


def flatten(docs: Iterable[Document]) -> list[Document]:
    """Expand ``kind: List`` documents into their items."""
    out: list[Document] = []
    for d in docs:
        if d.flat is None:
            d.flat = _flatten_one(d)
        out.extend(d.flat)
    return out


def _flatten_one(d: Document) -> list[Document]:
    if d.body.get("kind") == "List" or (
        str(d.body.get("kind", "")).endswith("List") and "items" in d.body
    ):
        items = d.body.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"{d.where}: items must be a list")
        out: list[Document] = []
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise InputError(f"{d.where}: items[{i}] must be a mapping")
            out.extend(_flatten_one(Document(item, f"{d.where} items[{i}]")))
        return out
    err = shape_error(d.body)
    if err:
        raise InputError(f"{d.label()}: {err}")
    return [d]


def _booting(
    info: NodeInfo, startup: Iterable[tuple[str, str]] = (), *, claimed: bool = False
) -> NodeInfo:
    """A managed Node not yet initialized is simulated with the taints it will have once it
    is (as Karpenter does): without the ephemeral taints of a booting node and its claim's
    startup taints. Otherwise the pods meant for it would look unschedulable there and get
    a second node while the first one is still coming up."""
    if not (claimed or info.nodepool) or info.labels.get(L.NODE_INITIALIZED) == "true":
        return info
    lifted = set(startup)  # (key, effect)
    kept = tuple(
        t
        for t in info.taints
        if t.key not in L.EPHEMERAL_TAINT_KEYS and (t.key, t.effect) not in lifted
    )
    return replace(info, taints=kept)


@dataclass(eq=False)
class _KeptNode:
    """A Node document's parse, and the node as a round simulates it (``_booting``) per
    startup taints of its claim (None: no claim), kept on the document: a caller that
    keeps the Document between readings (the provisioner keeps one per Node version) has it
    parsed once, and an unchanged Node without pods is the same node from one reading to
    the next. Never changed once made (pods are bound to a copy)."""

    info: NodeInfo
    booted: dict[tuple[tuple[str, str], ...] | None, NodeInfo] = field(default_factory=dict)
    # The node with the pods bound to it in the last reading (``_with_pods``).
    bound: list[tuple[NodeInfo, list[Pod], NodeInfo]] = field(default_factory=list)

    def node(self, startup: tuple[tuple[str, str], ...] | None = None) -> NodeInfo:
        found = self.booted.get(startup)
        if found is None:
            found = _booting(self.info)
            if startup is not None:
                found = _booting(found, startup, claimed=True)
            if len(self.booted) >= 4:  # a Node meets one claim: never more than a few
                self.booted.clear()
            self.booted[startup] = found
        return found


def _with_pods(
    slot: list[tuple[NodeInfo, list[Pod], NodeInfo]], base: NodeInfo, pods: list[Pod]
) -> NodeInfo:
    """``base`` with ``pods`` bound to it: the same object as the last reading's when the
    node and its pods are (each pod is parsed once per version), so what a solver keeps
    for a node answers again. ``slot`` is the kept node's; the result is never changed."""
    last = slot[0] if slot else None
    if (
        last is not None
        and last[0] is base
        and len(last[1]) == len(pods)
        and all(a is b for a, b in zip(last[1], pods, strict=True))
    ):
        return last[2]
    info = replace(base, pods=pods)
    slot[:] = [(base, pods, info)]
    return info


def _kept_node(doc: Document) -> _KeptNode:
    kept = doc.parsed
    if isinstance(kept, _KeptNode):
        return kept
    made = _KeptNode(_node_info(doc))
    doc.parsed = made
    return made


def _node_info(doc: Document) -> NodeInfo:
    body = doc.body
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    status = body.get("status") or {}
    name = meta.get("name")
    if not name:
        raise InputError(f"{doc.label()}: metadata.name is required")
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    labels.setdefault(L.HOSTNAME, str(name))
    try:
        alloc = parse_resources(status.get("allocatable") or status.get("capacity"))
        cap = parse_resources(status.get("capacity") or status.get("allocatable"))
    except ValueError as exc:
        raise InputError(f"{doc.label()}: status.allocatable.{exc}") from None
    taints = tuple(Taint.from_dict(t) for t in spec.get("taints") or [])
    return NodeInfo(
        name=str(name),
        labels=labels,
        requirements=Requirements.from_labels(labels),
        taints=taints,
        allocatable=alloc,
        capacity=cap,
        nodepool=labels.get(L.NODEPOOL),
        schedulable=not spec.get("unschedulable") and not meta.get("deletionTimestamp"),
    )


def _kept_claim_info(
    parts: ClaimParts,
    catalog: list[InstanceType],
    types: Mapping[str, InstanceType],
    smallest_of: dict[Requirement, tuple[Resources, Resources] | None],
) -> NodeInfo:
    """``_claim_info``, the same object as the last reading's under the same catalog (the
    caller copies it before binding pods to it)."""
    kept = parts.node[0] if parts.node else None
    if kept is not None and kept[0] is catalog:
        return kept[1]
    info = _claim_info(parts, types, smallest_of)
    parts.node[:] = [(catalog, info)]
    return info


def _claim_info(
    parts: ClaimParts,
    types: Mapping[str, InstanceType],
    smallest_of: dict[Requirement, tuple[Resources, Resources] | None],
) -> NodeInfo:
    """An in-flight NodeClaim: its capacity is what status says, else its (smallest) type.

    ``smallest_of`` remembers the smallest type per instance-type requirement for one
    reading: a burst's claims list the same types, and the catalog has hundreds."""
    alloc, cap = parts.allocatable, parts.capacity
    if not alloc:
        names = parts.instance_types
        if names not in smallest_of:
            candidates = [it for n, it in types.items() if names.has(n)]
            smallest_of[names] = None
            if candidates:
                smallest = min(candidates, key=lambda it: sorted(it.allocatable.items()))
                smallest_of[names] = (smallest.allocatable, smallest.capacity)
        found = smallest_of[names]
        if found is not None:
            alloc, cap = found
    claim = parts.claim
    return NodeInfo(
        name=claim.name,
        labels=dict(parts.labels),
        requirements=parts.requirements,
        taints=parts.taints,
        allocatable=dict(alloc),
        capacity=dict(cap or alloc),
        nodepool=parts.labels.get(L.NODEPOOL),
        in_flight=True,
        schedulable=claim.metadata.deletion_timestamp is None,
    )


def _volume_requirements(
    pod: Pod,
    pvcs: Mapping[tuple[str, str], Mapping[str, Any]],
    pvs: Mapping[str, Mapping[str, Any]],
    classes: Mapping[str, Mapping[str, Any]],
) -> Requirements | str | None:
    """Zone constraints from a pod's volumes, or a reason it cannot be scheduled."""
    reqs: list[Requirement] = []
    for claim_name in pod.pvcs:
        pvc = pvcs.get((pod.namespace, claim_name))
        if pvc is None:
            return f'persistentvolumeclaim "{claim_name}" not found'
        spec = pvc.get("spec") or {}
        pv_name = spec.get("volumeName")
        if pv_name:
            pv = pvs.get(str(pv_name))
            if pv is None:
                return f'persistentvolume "{pv_name}" bound to claim "{claim_name}" not found'
            terms = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get(
                "nodeSelectorTerms"
            ) or []
            for term in terms[:1]:
                for e in term.get("matchExpressions") or []:
                    key = L.normalize(str(e.get("key")))
                    if key == L.HOSTNAME:
                        continue
                    reqs.append(
                        Requirement.create(key, str(e.get("operator")), e.get("values") or [])
                    )
            continue
        sc_name = spec.get("storageClassName")
        sc = classes.get(str(sc_name)) if sc_name else None
        if sc_name and sc is None:
            return f'storageclass "{sc_name}" not found'
        for topo in (sc or {}).get("allowedTopologies") or []:
            for e in topo.get("matchLabelExpressions") or []:
                key = L.normalize(str(e.get("key")))
                reqs.append(Requirement.create(key, IN, [str(v) for v in e.get("values") or []]))
    return Requirements(reqs) if reqs else None


def _pods_volumes(
    pod_docs: Iterable[tuple[Document, Pod]],
    pvcs: Mapping[tuple[str, str], Mapping[str, Any]],
    pvs: Mapping[str, Mapping[str, Any]],
    classes: Mapping[str, Mapping[str, Any]],
) -> dict[str, dict[str, frozenset[str]]]:
    """Each pod's CSI volumes by driver, for the nodes' attach limits."""
    out: dict[str, dict[str, frozenset[str]]] = {}
    for d, pod in pod_docs:
        spec_volumes = (d.body.get("spec") or {}).get("volumes") or []
        if spec_volumes:
            vols = pod_volumes(pod.namespace, pod.name, spec_volumes, pvcs, pvs, classes)
            if vols:
                out[pod.key] = vols
    return out


@dataclass
class _Read:
    """The documents of one reading sorted by what they are, each parsed as far as it can be
    on its own (``_read``)."""

    runtime_overheads: dict[str, Resources]
    warnings: list[str] = field(default_factory=list)
    nodepools: list[NodePool] = field(default_factory=list)
    pod_docs: list[tuple[Document, Pod]] = field(default_factory=list)
    node_docs: list[Document] = field(default_factory=list)
    claim_docs: list[tuple[Document, ClaimParts]] = field(default_factory=list)
    daemonsets: list[Pod] = field(default_factory=list)
    pvcs: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    pvs: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    classes: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    volume_limits: dict[str, dict[str, int]] = field(default_factory=dict)  # node → driver → n


def build_problem(
    documents: Iterable[Document],
    instance_types: list[InstanceType],
    pool_instance_types: Mapping[str, list[InstanceType]] | None = None,
    policies: Policies | None = None,
) -> Parsed:
    """Build the Problem; raises InputError (one line) for invalid input.

    ``instance_types`` is every pool's catalog unless ``pool_instance_types`` gives a pool
    its own (``Problem.pool_instance_types``); an in-flight claim without capacity in its
    status is sized from its pool's catalog."""
    read = _read(flatten(documents))
    own = dict(pool_instance_types or {})
    nodes, slots, deleting = _nodes(read, instance_types, own)
    pending = _bind_pods(read, nodes, slots, deleting)
    for name, limits in read.volume_limits.items():
        if name in nodes and limits and not nodes[name].in_flight:
            nodes[name] = replace(nodes[name], volume_limits=limits)
    volumes = (
        _pods_volumes(read.pod_docs, read.pvcs, read.pvs, read.classes)
        if read.volume_limits
        else {}
    )
    rejected, volume_reqs = _pod_volume_zones(read, pending, nodes)
    problem = Problem(
        nodepools=read.nodepools,
        instance_types=instance_types,
        pending=pending,
        nodes=list(nodes.values()),
        daemonsets=read.daemonsets,
        volume_requirements=volume_reqs,
        volumes=volumes,
        rejected=rejected,
        namespace_labels=read.namespace_labels,
        pool_instance_types=own,
        policies=policies or Policies(),
    )
    if problem.policies.ignore_preferences:
        ignore_preferences(problem)
    return Parsed(problem, read.warnings)


def _read(docs: list[Document]) -> _Read:
    """Sort the documents by kind and parse each on its own (RuntimeClasses first: a pod's
    overhead reads them)."""
    runtime_overheads: dict[str, Resources] = {}
    for d in docs:
        if d.body.get("kind") == "RuntimeClass":
            name = str((d.body.get("metadata") or {}).get("name"))
            raw = (d.body.get("overhead") or {}).get("podFixed")
            try:
                runtime_overheads[name] = parse_resources(raw)
            except ValueError as exc:
                raise InputError(f"{d.label()}: overhead.podFixed.{exc}") from None
    read = _Read(runtime_overheads)
    seen_pools: set[str] = set()
    shared_claims: dict[tuple[object, ...], SharedClaimParts] = {}
    memo = SpecMemo(runtime_overheads)  # a Deployment's replicas: one spec, parsed once
    ov_key = overheads_key(runtime_overheads)
    for d in docs:
        kind = d.body.get("kind")
        api = str(d.body.get("apiVersion", ""))
        if not kind:
            raise InputError(f"{d.where}: kind is required")
        try:
            if kind == "NodePool" and api.startswith("karpenter.sh/"):
                np = NodePool.model_validate(d.body)
                if np.name in seen_pools:
                    raise InputError(f"{d.label()}: metadata.name: duplicate NodePool")
                seen_pools.add(np.name)
                read.nodepools.append(np)
            elif kind == "Pod":
                read.pod_docs.append((d, parsed_pod(d, runtime_overheads, memo, ov_key)))
            elif kind == "Node":
                read.node_docs.append(d)
            elif kind == "NodeClaim" and api.startswith("karpenter.sh/"):
                read.claim_docs.append((d, claim_parts(d, shared_claims)))
            elif kind == "DaemonSet":
                read.daemonsets.append(_daemonset_pod(d, runtime_overheads, memo))
            elif kind == "PersistentVolumeClaim":
                meta = d.body.get("metadata") or {}
                pvc_key = (str(meta.get("namespace") or "default"), str(meta.get("name")))
                read.pvcs[pvc_key] = d.body
            elif kind == "PersistentVolume":
                read.pvs[str((d.body.get("metadata") or {}).get("name"))] = d.body
            elif kind == "StorageClass":
                read.classes[str((d.body.get("metadata") or {}).get("name"))] = d.body
            elif kind == "CSINode":
                node_name = str((d.body.get("metadata") or {}).get("name"))
                read.volume_limits[node_name] = csinode_limits(d.body)
            elif kind == "Namespace":
                meta = d.body.get("metadata") or {}
                labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
                read.namespace_labels[str(meta.get("name"))] = labels
            elif kind in ("RuntimeClass",):
                pass
            else:
                read.warnings.append(
                    f"{d.label()}: kind {kind} is not used by the planner; ignored"
                )
        except InputError:
            raise  # already names the document
        except ValidationError as exc:
            raise InputError(f"{d.label()}: {field_error(exc)}") from None
        except PodError as exc:
            raise InputError(f"{d.label()}: {exc}") from None
        except ValueError as exc:
            raise InputError(f"{d.label()}: {exc}") from None
    return read


def _daemonset_pod(d: Document, runtime_overheads: dict[str, Resources], memo: SpecMemo) -> Pod:
    """The pod a DaemonSet runs on every node it selects (its requests are overhead)."""
    tmpl = ((d.body.get("spec") or {}).get("template")) or {}
    meta = dict(tmpl.get("metadata") or {})
    meta.setdefault("name", (d.body.get("metadata") or {}).get("name"))
    meta["namespace"] = (d.body.get("metadata") or {}).get("namespace", "default")
    meta["ownerReferences"] = [{"kind": "DaemonSet", "name": meta["name"], "controller": True}]
    return parse_pod({"metadata": meta, "spec": tmpl.get("spec") or {}}, runtime_overheads, memo)


# Per node, where its kept object remembers the node with its bound pods (``_with_pods``).
_Slots = dict[str, list[tuple[NodeInfo, list[Pod], NodeInfo]]]


def _nodes(
    read: _Read, instance_types: list[InstanceType], own: Mapping[str, list[InstanceType]]
) -> tuple[dict[str, NodeInfo], _Slots, set[str]]:
    """The cluster's nodes by name: each Node (tainted while a claim for it is starting up),
    then each NodeClaim that no Node represents yet (in flight, sized from its catalog); with
    where each keeps its bound pods, and the names of the nodes being deleted."""
    # Per catalog (by identity): its types by name, and the smallest type per instance-type
    # requirement (``_claim_info``), for this reading.
    lookups: dict[
        int, tuple[dict[str, InstanceType], dict[Requirement, tuple[Resources, Resources] | None]]
    ] = {}
    nodes: dict[str, NodeInfo] = {}
    provider_ids: dict[str, str] = {}
    slots: _Slots = {}
    kept_nodes: dict[str, _KeptNode] = {}
    claimed: set[str] = set()
    for d in read.node_docs:
        kept = _kept_node(d)
        info = kept.info
        nodes[info.name] = kept.node()
        kept_nodes[info.name] = kept
        slots[info.name] = kept.bound
        pid = (d.body.get("spec") or {}).get("providerID")
        if pid:
            provider_ids[str(pid)] = info.name
    for d, parts in read.claim_docs:
        claim = parts.claim
        node_name = claim.status.node_name if claim.status.node_name in nodes else None
        if node_name is None and claim.status.provider_id:
            node_name = provider_ids.get(claim.status.provider_id)
        if node_name is not None:  # registered: the Node represents it
            startup = [(t.key, str(t.effect)) for t in claim.spec.startup_taints]
            if node_name in claimed:  # a second claim for one Node: lift its taints too
                nodes[node_name] = _booting(nodes[node_name], startup, claimed=True)
            else:
                nodes[node_name] = kept_nodes[node_name].node(tuple(startup))
            claimed.add(node_name)
            continue
        if claim_going_away(d.body):
            continue  # deleted before its Node came: no capacity to count on
        catalog = own.get(parts.labels.get(L.NODEPOOL, ""), instance_types)
        lookup = lookups.get(id(catalog))
        if lookup is None:
            lookup = lookups[id(catalog)] = ({it.name: it for it in catalog}, {})
        info = _kept_claim_info(parts, catalog, lookup[0], lookup[1])
        if info.name in nodes:
            continue
        nodes[info.name] = info
        slots[info.name] = parts.bound
    deleting = going_away_nodes(
        (d.body for d in read.node_docs), (d.body for d, _parts in read.claim_docs)
    )
    for name in deleting:  # capacity that is going away takes no pod (Karpenter: Active())
        if name in nodes and nodes[name].schedulable:
            nodes[name] = replace(nodes[name], schedulable=False)
    return nodes, slots, deleting


def _bind_pods(
    read: _Read, nodes: dict[str, NodeInfo], slots: _Slots, deleting: set[str]
) -> list[Pod]:
    """Bind each running pod to its node (in ``nodes``) and return the pending pods: those
    with no node, and those Karpenter reschedules from a node that is going away
    (``scheduling.going_away``)."""
    pending: list[Pod] = []
    bound: dict[str, list[Pod]] = {}
    for d, pod in read.pod_docs:
        if pod.is_terminal:
            continue
        if pod.node_name:
            if pod.node_name in deleting and reschedulable(d.body):
                pending.append(replace(pod, node_name=None))  # the parse is shared: a copy
            elif pod.node_name in nodes:
                bound.setdefault(pod.node_name, []).append(pod)
            continue
        pending.append(pod)
    for name, on_node in bound.items():  # kept nodes are never changed: bound to a copy
        nodes[name] = _with_pods(slots[name], nodes[name], on_node)
    return pending


def _pod_volume_zones(
    read: _Read, pending: list[Pod], nodes: Mapping[str, NodeInfo]
) -> tuple[dict[str, str], dict[str, Requirements]]:
    """The pending pods rejected before solving (with why), and the requirements each pod's
    volumes put on its node (zones); raises InputError on a pending pod given twice."""
    rejected: dict[str, str] = {}
    volume_reqs: dict[str, Requirements] = {}
    pvcs, pvs, classes = read.pvcs, read.pvs, read.classes
    seen: set[str] = set()
    for pod in pending:
        if pod.key in seen:
            raise InputError(f"Pod {pod.key}: duplicate pod")
        seen.add(pod.key)
        if pod.is_daemonset:
            rejected[pod.key] = (
                "DaemonSet pods are not provisioned for; their requests count as overhead on "
                "every new node"
            )
            continue
        vol = _volume_requirements(pod, pvcs, pvs, classes)
        if isinstance(vol, str):
            rejected[pod.key] = vol
        elif vol is not None:
            volume_reqs[pod.key] = vol
    # Bound pods' volume zones too: a disruption round that moves a pod must keep it in the
    # zone of its volumes (provisioning reads these for pending pods only).
    for info in nodes.values():
        for pod in info.pods:
            if pod.pvcs and not pod.is_daemonset:
                vol = _volume_requirements(pod, pvcs, pvs, classes)
                if vol is not None and not isinstance(vol, str):
                    volume_reqs[pod.key] = vol
    return rejected, volume_reqs
