"""Registration: the instance's Node has appeared; make it Joinery's.

Like Karpenter's registration controller: the Node gets the termination finalizer, an owner
reference to its NodeClaim, the claim's labels, and its annotations and taints (once, before
it is marked registered, so startup taints removed later are not put back and an annotation
an operator later removes from the Node, such as ``karpenter.sh/do-not-disrupt`` from the
NodePool's template, stays removed), loses the
``karpenter.sh/unregistered`` taint and gains ``karpenter.sh/registered=true``; the claim
records ``status.nodeName`` and ``Registered=True``.
"""

from __future__ import annotations

from typing import Any

from activities.deps import Deps
from activities.kubernetes import conditions as cond
from activities.kubernetes import finalizers, nodeclaims, nodes
from activities.kubernetes.errors import NotFound
from activities.kubernetes.retries import retry_conflicts
from activities.lifecycle import initialization, reads
from activities.lifecycle.types import (
    ClaimSpec,
    InitializeInput,
    InitializeOutcome,
    RegisterInput,
    Registration,
)
from activities.status import registration_health
from models import conditions
from models import labels as L


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a.get("key"), a.get("effect")) == (b.get("key"), b.get("effect"))


def initialized_label(node: dict[str, Any]) -> bool:
    return (node["metadata"].get("labels") or {}).get(L.NODE_INITIALIZED) == "true"


def node_patch(
    node: dict[str, Any], claim: dict[str, Any], spec: ClaimSpec | None = None
) -> dict[str, Any] | None:
    """The merge patch registering ``node`` for ``claim``; None when nothing changes.

    With ``spec``: when the Node as patched would already be initialized (Ready, no startup
    or ephemeral taint, extended resources advertised: ``initialization``), the patch sets
    ``karpenter.sh/initialized`` too, so a Node that is ready at registration (kwok's, or a
    fast boot) costs no separate write for it; the initialization check then finds it done.
    """
    meta = node["metadata"]
    labels = dict(meta.get("labels") or {})
    claim_meta = claim["metadata"]
    claim_spec = claim.get("spec") or {}
    registered = labels.get(L.NODE_REGISTERED) == "true"
    wanted_labels = {
        **{str(k): str(v) for k, v in (claim_meta.get("labels") or {}).items()},
        L.NODE_REGISTERED: "true",
    }
    for requirement in claim_spec.get("requirements") or []:
        values = requirement.get("values") or []
        if requirement.get("operator") == "In" and len(values) == 1:
            wanted_labels.setdefault(str(requirement["key"]), str(values[0]))
    patch_meta: dict[str, Any] = {}
    new_labels = {k: v for k, v in wanted_labels.items() if labels.get(k) != v}
    if new_labels:
        patch_meta["labels"] = new_labels
    if not registered:
        # All of the claim's annotations (the pool template's among them), the claim's value
        # winning, as Karpenter's registration does.
        annotations = meta.get("annotations") or {}
        new_annotations = {
            str(k): str(v)
            for k, v in (claim_meta.get("annotations") or {}).items()
            if annotations.get(k) != v
        }
        if new_annotations:
            patch_meta["annotations"] = new_annotations
    added = finalizers.with_added(node, L.TERMINATION_FINALIZER)
    if added is not None and not meta.get("deletionTimestamp"):
        patch_meta["finalizers"] = added
    owners = list(meta.get("ownerReferences") or [])
    if not any(o.get("uid") == claim_meta.get("uid") for o in owners):
        owners.append(
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodeClaim",
                "name": claim_meta["name"],
                "uid": claim_meta["uid"],
                "blockOwnerDeletion": True,
            }
        )
        patch_meta["ownerReferences"] = owners
    taints = list((node.get("spec") or {}).get("taints") or [])
    new_taints = [t for t in taints if t.get("key") != L.UNREGISTERED_TAINT_KEY]
    # The claim's taints go onto the Node once, at registration, unless the Node says its
    # launch registered them already (the kubelet's own taints; re-adding a startup taint a
    # DaemonSet lifted in between would leave the node uninitialized for good).
    if not registered and labels.get(L.DO_NOT_SYNC_TAINTS) != "true":
        for t in [*(claim_spec.get("taints") or []), *(claim_spec.get("startupTaints") or [])]:
            if not any(_same(t, existing) for existing in new_taints):
                new_taints.append(dict(t))
    if spec is not None and labels.get(L.NODE_INITIALIZED) != "true":
        after = {
            **node,
            "metadata": {**meta, "labels": {**labels, **new_labels}},
            "spec": {**(node.get("spec") or {}), "taints": new_taints},
        }
        if not initialization.why_not_initialized(after, spec):
            patch_meta.setdefault("labels", {})[L.NODE_INITIALIZED] = "true"
    patch: dict[str, Any] = {}
    if new_taints != taints:
        patch["spec"] = {"taints": new_taints}
    if patch_meta:
        patch["metadata"] = patch_meta
    if not patch:
        return None
    patch.setdefault("metadata", {})["resourceVersion"] = meta["resourceVersion"]
    return patch


def _pointer(key: str) -> str:
    """``key`` as one JSON-pointer step (RFC 6901): label keys hold ``/``."""
    return key.replace("~", "~0").replace("/", "~1")


def json_ops(node: dict[str, Any], patch: dict[str, Any]) -> list[dict[str, Any]]:
    """``node_patch``'s merge patch as a JSON patch guarded by ``test`` operations on just
    the fields it rewrites whole (taints, finalizers, owner references; labels or annotations
    only when the Node has none), so only a change to those refuses it. Labels and annotations
    are set key by key."""
    meta, spec = node["metadata"], node.get("spec") or {}
    ops: list[dict[str, Any]] = []

    def replace(path: str, old: Any, new: Any) -> None:
        ops.append({"op": "test", "path": path, "value": old})
        ops.append({"op": "add", "path": path, "value": new})

    wanted = patch.get("metadata") or {}
    if "taints" in (patch.get("spec") or {}):
        replace("/spec/taints", spec.get("taints"), patch["spec"]["taints"])
    for field in ("finalizers", "ownerReferences"):
        if field in wanted:
            replace(f"/metadata/{field}", meta.get(field), wanted[field])
    for field in ("labels", "annotations"):
        if not wanted.get(field):
            continue
        if meta.get(field):
            for key, value in wanted[field].items():
                ops.append(
                    {"op": "add", "path": f"/metadata/{field}/{_pointer(key)}", "value": value}
                )
        else:
            replace(f"/metadata/{field}", meta.get(field), wanted[field])
    return ops


def _differs(claim: dict[str, Any], c: cond.Condition) -> bool:
    """Whether writing ``c`` changes the claim's condition of its type (status or reason)."""
    found = cond.find((claim.get("status") or {}).get("conditions") or [], c.type)
    return found is None or (found.get("status"), found.get("reason")) != (c.status, c.reason)


def _named(deps: Deps, name: str, provider_id: str) -> dict[str, Any] | None:
    """The Node ``name``, if it carries ``provider_id`` (as watched, else one GET)."""
    if not name:
        return None
    try:
        node = reads.node(deps, name, trust=initialization.looks_ready)
    except NotFound:
        return None
    return node if (node.get("spec") or {}).get("providerID") == provider_id else None


def _searched(deps: Deps, inp: RegisterInput) -> dict[str, Any] | None:
    """The Node carrying the claim's providerID, found without the watcher's name.

    The worker's Node index answers while its watch is synced: a providerID it lacks has no
    Node yet, and no call is made. Without one (or when its entry is stale) the pool's Nodes
    are listed, then all Nodes.
    """
    index = deps.node_index
    if index is not None and index.synced:
        name = index.name_of(inp.provider_id)
        if name is None:
            return None
        if name != inp.node_name:  # that one was read already
            node = _named(deps, name, inp.provider_id)
            if node is not None:
                return node
    pool = inp.claim.nodepool
    selector = f"{L.NODEPOOL}={pool}" if pool else ""
    node = nodes.by_provider_id(deps.kube, inp.provider_id, label_selector=selector)
    if node is None and selector:
        node = nodes.by_provider_id(deps.kube, inp.provider_id)
    return node


def register(deps: Deps, inp: RegisterInput) -> str | None:
    """The registered Node's name, or None while no Node carries the providerID yet."""
    return _register(deps, inp)[0]


def register_and_initialize(deps: Deps, inp: RegisterInput) -> Registration:
    """``register``, and once the Node is there, the initialization check in the same call
    (shape 2). A claim that registration found or marked ``Initialized=True`` (a Node ready
    at once) is initialized, as ``initialization.initialize`` would answer at its first read;
    otherwise that check runs here."""
    name, initialized = _register(deps, inp)
    if name is None:
        return Registration()
    if initialized:
        return Registration(name, InitializeOutcome(True))
    return Registration(name, initialization.initialize(deps, InitializeInput(inp.claim, name)))


def _register(deps: Deps, inp: RegisterInput) -> tuple[str | None, bool]:
    """The registered Node's name (None: not there yet) and whether the claim is now
    ``Initialized=True``."""
    pool = inp.claim.nodepool
    node = _named(deps, inp.node_name, inp.provider_id)
    if node is None and inp.search:
        node = _searched(deps, inp)
    if node is None:
        return None, False
    name = str(node["metadata"]["name"])
    first_time = (node["metadata"].get("labels") or {}).get(L.NODE_REGISTERED) != "true"
    # Four calls when nothing races: the Node as found above, the claim read once, one patch
    # of the Node and one status write of the claim; two when the worker's watches hold
    # both (``reads``). A conflict re-reads what it lost on. The Node's patch is guarded
    # by tests of the fields it rewrites, not by its resourceVersion: kwok's and the
    # controller-manager's writes to a new Node's status and annotations made a quarter of
    # these patches lose and retry (docs/performance.md, session 25).
    box: dict[str, Any] = {"node": node}
    node_stale = False

    def sync_node() -> None:
        nonlocal node_stale
        current = nodes.get(deps.kube, name) if node_stale else box["node"]
        node_stale = True
        # a lost race on the Node (kwok's or a kubelet's status writes move its
        # resourceVersion) leaves the claim as read: only the Node is read again
        claim = box.get("claim") or reads.claim(deps, inp.claim.name)
        box["claim"] = claim
        patch = node_patch(current, claim, inp.claim)
        box["node"] = (
            current
            if patch is None
            else reads.node_written(
                deps, nodes.patch_tested(deps.kube, name, json_ops(current, patch))
            )
        )

    def sync_claim() -> None:
        claim = box.pop("claim", None) or nodeclaims.get(deps.kube, inp.claim.name)
        box["claim_read"] = claim
        updates = [cond.Condition(conditions.REGISTERED, "True", conditions.REGISTERED)]
        if initialized_label(box["node"]):
            updates.append(cond.Condition(conditions.INITIALIZED, "True", conditions.INITIALIZED))
        else:  # why not yet, in the same write (as Karpenter's one status patch per reconcile)
            reason = initialization.why_not_initialized(box["node"], inp.claim)
            updates.append(initialization.not_initialized(reason or "NodeNotInitialized"))
        updates = [c for c in updates if not cond.is_true(claim, c.type) and _differs(claim, c)]
        box["claim_initialized"] = cond.is_true(claim, conditions.INITIALIZED)
        if (claim.get("status") or {}).get("nodeName") != name or updates:
            reads.claim_written(deps, nodeclaims.record_node(deps.kube, claim, name, updates))
            box["initialized"] = any(
                c.type == conditions.INITIALIZED and c.status == "True" for c in updates
            )

    try:
        retry_conflicts(sync_node)
        retry_conflicts(sync_claim)
    except NotFound:
        return None, False
    if first_time:
        zone = str((node["metadata"].get("labels") or {}).get(L.ZONE) or "")
        deps.counters.node_created(pool, zone)
        deps.counters.nodeclaim_registered(pool, inp.claim.nodeclass)
        # A registration is a success for the pool's NodeRegistrationHealthy (best effort:
        # recorded in memory, written by the status reporter).
        registration_health.outcome(box.get("claim_read") or {}, True)
    if box.get("initialized"):
        deps.counters.nodeclaim_initialized(pool, inp.claim.nodeclass)
    return name, bool(box.get("initialized") or box.get("claim_initialized"))
