"""Pods as the solver sees them: requests and every scheduling constraint, parsed once.

Parsing applies the Kubernetes API defaulting that matters here (container requests default
to limits) and raises ``PodError`` naming the field for anything the solver cannot honour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from models import labels as L
from models.requirements import DOES_NOT_EXIST, NOT_IN, Requirement, Requirements
from models.resources import PODS, Resources, add, maximum, parse_resources
from scheduling.taints import Toleration

SUPPORTED_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


class PodError(ValueError):
    """A pod the solver will not schedule, with a one-line reason."""


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A metav1.LabelSelector reduced to (key, operator, values) clauses, hashable."""

    clauses: tuple[tuple[str, str, frozenset[str]], ...]
    matches_nothing: bool = False

    @staticmethod
    def parse(
        raw: Mapping[str, Any] | None, extra: Mapping[str, str] | None = None
    ) -> LabelSelector:
        if raw is None:
            # A nil selector selects nothing (topology spread and affinity terms).
            return LabelSelector((), matches_nothing=True)
        clauses: list[tuple[str, str, frozenset[str]]] = []
        for k, v in (raw.get("matchLabels") or {}).items():
            clauses.append((str(k), "In", frozenset((str(v),))))
        for expr in raw.get("matchExpressions") or []:
            op = str(expr.get("operator"))
            if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
                raise PodError(f"label selector operator {op!r} is not valid")
            clauses.append(
                (str(expr.get("key")), op, frozenset(str(x) for x in expr.get("values") or []))
            )
        for k, v in (extra or {}).items():
            clauses.append((k, "In", frozenset((v,))))
        return LabelSelector(tuple(sorted(clauses, key=lambda c: (c[0], c[1], sorted(c[2])))))

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.matches_nothing:
            return False
        for key, op, values in self.clauses:
            present = key in labels
            if op == "In":
                if not present or labels[key] not in values:
                    return False
            elif op == "NotIn":
                if present and labels[key] in values:
                    return False
            elif op == "Exists":
                if not present:
                    return False
            elif present:  # DoesNotExist
                return False
        return True


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    key: str
    max_skew: int
    hard: bool  # DoNotSchedule
    selector: LabelSelector
    min_domains: int | None
    honor_affinity: bool  # nodeAffinityPolicy
    honor_taints: bool  # nodeTaintsPolicy


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    key: str
    selector: LabelSelector
    namespaces: frozenset[str]  # empty with all_namespaces False means the pod's namespace
    all_namespaces: bool
    namespace_selector: LabelSelector | None


@dataclass(eq=False, slots=True)
class Pod:
    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    requests: Resources
    node_selector: Requirements
    required_terms: list[Requirements]
    preferred_terms: list[tuple[int, Requirements]]
    tolerations: tuple[Toleration, ...]
    spreads: tuple[SpreadConstraint, ...]
    affinity: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[tuple[int, AffinityTerm], ...]
    anti_affinity: tuple[AffinityTerm, ...]
    preferred_anti_affinity: tuple[tuple[int, AffinityTerm], ...]
    host_ports: frozenset[tuple[str, int, str]]
    pvcs: tuple[str, ...]
    node_name: str | None
    priority: int
    owner_kind: str | None
    owner_name: str | None
    phase: str
    deleting: bool
    invalid: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The parse of the pod's spec its constraints come from, shared by every pod of the same
    # spec (``SpecMemo``); None when parsed alone. What its constraints imply is then worked
    # out once per spec (``CatalogCache.class_parts``).
    spec_parts: object = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_daemonset(self) -> bool:
        return self.owner_kind == "DaemonSet"

    @property
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")


def _container_requests(container: Mapping[str, Any], where: str) -> Resources:
    res = container.get("resources") or {}
    try:
        limits = parse_resources(res.get("limits"))
        requests = parse_resources(res.get("requests"))
    except ValueError as exc:
        raise PodError(f"{where}.resources: {exc}") from None
    # API defaulting: a limit without a request makes the request equal to the limit.
    return {**limits, **requests}


def effective_requests(
    spec: Mapping[str, Any], runtime_overhead: Resources | None = None
) -> Resources:
    """What the kube-scheduler reserves for a pod: containers, init containers, sidecars, overhead.

    Regular init containers run one at a time, so the pod needs the largest of them (plus the
    restartable sidecars started before it); restartable init containers keep running beside
    the app containers, so they add to the sum.
    """
    app: Resources = {}
    for i, c in enumerate(spec.get("containers") or []):
        app = add(app, _container_requests(c, f"spec.containers[{i}]"))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for i, c in enumerate(spec.get("initContainers") or []):
        req = _container_requests(c, f"spec.initContainers[{i}]")
        if c.get("restartPolicy") == "Always":
            sidecars = add(sidecars, req)
            init_peak = maximum(init_peak, sidecars)
        else:
            init_peak = maximum(init_peak, add(sidecars, req))
    total = maximum(add(app, sidecars), init_peak)
    overhead = runtime_overhead
    if overhead is None:
        try:
            overhead = parse_resources(spec.get("overhead"))
        except ValueError as exc:
            raise PodError(f"spec.overhead: {exc}") from None
    total = add(total, overhead)
    total[PODS] = total.get(PODS, 0) + 1000
    return {k: v for k, v in total.items() if v}


def _node_selector_term(term: Mapping[str, Any], where: str) -> list[Requirement]:
    if term.get("matchFields"):
        raise PodError(f"{where}.matchFields is not supported")
    reqs: list[Requirement] = []
    for j, expr in enumerate(term.get("matchExpressions") or []):
        op = str(expr.get("operator"))
        key = L.normalize(str(expr.get("key")))
        if op not in SUPPORTED_OPERATORS:
            raise PodError(f"{where}.matchExpressions[{j}]: operator {op!r} is not supported")
        reason = L.restricted_selector_reason(key)
        if reason:
            raise PodError(f"{where}.matchExpressions[{j}]: {reason}")
        try:
            reqs.append(Requirement.create(key, op, [str(v) for v in expr.get("values") or []]))
        except ValueError as exc:
            raise PodError(f"{where}.matchExpressions[{j}]: {exc}") from None
    return reqs


def _matches_no_node(term: list[Requirement], selector: list[Requirement]) -> str | None:
    """Why no node can match a node selector term together with the nodeSelector, or None.

    The kube-scheduler ANDs them, and an empty term matches nothing. Merged as requirements,
    a key required present (In, Exists, Gt, Lt) with no value left would read as
    DoesNotExist and admit nodes that lack the label, so the contradiction is caught here,
    from the unmerged parts."""
    if not term:
        return "the term is empty (matches no node)"
    merged: dict[str, Requirement] = {}
    present: set[str] = set()
    for r in (*selector, *term):
        cur = merged.get(r.key)
        merged[r.key] = r if cur is None else cur.intersection(r)
        if r.operator not in (NOT_IN, DOES_NOT_EXIST):
            present.add(r.key)
    for key in sorted(present):
        if len(merged[key]) == 0:
            return f"no value of {key} satisfies it together with spec.nodeSelector"
    return None


def _affinity_term(raw: Mapping[str, Any], labels: Mapping[str, str], where: str) -> AffinityTerm:
    key = raw.get("topologyKey")
    if not key:
        raise PodError(f"{where}.topologyKey is required")
    extra = {k: labels[k] for k in raw.get("matchLabelKeys") or [] if k in labels}
    selector = LabelSelector.parse(raw.get("labelSelector"), extra)
    ns_sel = raw.get("namespaceSelector")
    namespaces = frozenset(str(n) for n in raw.get("namespaces") or [])
    all_ns = (
        ns_sel is not None and not ns_sel.get("matchLabels") and not ns_sel.get("matchExpressions")
    )
    return AffinityTerm(
        L.normalize(str(key)),
        selector,
        namespaces,
        all_ns,
        None if ns_sel is None or all_ns else LabelSelector.parse(ns_sel),
    )


# The fields of a pod's spec that ``_parse_spec`` reads: a memo's key is made of them (nodeName
# and priority are read per pod; tests/unit/scheduling check that no other field is read).
SPEC_FIELDS = (
    "containers",
    "initContainers",
    "overhead",
    "runtimeClassName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "volumes",
)


@dataclass(frozen=True, slots=True)
class _SpecParts:
    """What a pod's spec says, parsed: the same for every replica of a Deployment."""

    requests: Resources
    node_selector: Requirements
    required_terms: tuple[Requirements, ...]
    preferred_terms: tuple[tuple[int, Requirements], ...]
    tolerations: tuple[Toleration, ...]
    spreads: tuple[SpreadConstraint, ...]
    affinity: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[tuple[int, AffinityTerm], ...]
    anti_affinity: tuple[AffinityTerm, ...]
    preferred_anti_affinity: tuple[tuple[int, AffinityTerm], ...]
    host_ports: frozenset[tuple[str, int, str]]
    pvcs: tuple[str, ...]
    invalid: str | None


class SpecMemo:
    """Parsed pod specs by content, for one reading of the inputs (never kept across runs).

    A Deployment's replicas differ only in their names, uids and bound nodes; their specs
    are equal, so each distinct spec is parsed once and its (immutable) parts shared. The key
    is the ``repr`` of the fields ``_parse_spec`` reads (``SPEC_FIELDS``), plus the pod's
    labels when a spread or affinity term reads them (``matchLabelKeys``), so two pods share
    a parse only when everything it reads is equal, value for value and type for type
    (``repr`` tells ``1``, ``1.0``, ``True`` and ``"1"`` apart, keys included). Decoded YAML
    or JSON holds only values whose ``repr`` is their content; a self-referencing value
    (``repr`` writes ``...`` for the loop) and anything ``repr`` refuses (too deep, an int of
    thousands of digits) are parsed without the memo. Specs that fail to parse are not kept
    (the error stops the reading).
    """

    __slots__ = ("_overheads", "_parts")

    def __init__(self, runtime_overheads: Mapping[str, Resources] | None = None) -> None:
        self._overheads = runtime_overheads
        self._parts: dict[object, _SpecParts] = {}

    def __len__(self) -> int:
        return len(self._parts)

    def parts(self, spec: Mapping[str, Any], labels: Mapping[str, str]) -> _SpecParts:
        try:
            text = repr([spec.get(f) for f in SPEC_FIELDS])
        except (RecursionError, ValueError):  # too deep; an int too long to write out
            return _parse_spec(spec, labels, self._overheads)
        if "..." in text:
            return _parse_spec(spec, labels, self._overheads)
        key: object = text
        if "matchLabelKeys" in text:
            key = (text, tuple(labels.items()))
        hit = self._parts.get(key)
        if hit is None:
            hit = self._parts[key] = _parse_spec(spec, labels, self._overheads)
        return hit


def _parse_spec(
    spec: Mapping[str, Any],
    labels: Mapping[str, str],
    runtime_overheads: Mapping[str, Resources] | None,
) -> _SpecParts:
    """The parts of a pod that its spec decides (reading only ``SPEC_FIELDS``, and the pod's
    labels for ``matchLabelKeys``)."""
    rc = spec.get("runtimeClassName")
    overhead = (runtime_overheads or {}).get(str(rc)) if rc else None
    requests = effective_requests(spec, overhead)
    invalid: str | None = None

    node_selector = Requirements()
    required_terms: list[Requirements] = []
    preferred_terms: list[tuple[int, Requirements]] = []
    try:
        sel_reqs = []
        for k, v in (spec.get("nodeSelector") or {}).items():
            key = L.normalize(str(k))
            reason = L.restricted_selector_reason(key)
            if reason:
                raise PodError(f"spec.nodeSelector: {reason}")
            sel_reqs.append(Requirement.create(key, "In", [str(v)]))
        node_selector = Requirements(sel_reqs)
        na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        selector_terms = req.get("nodeSelectorTerms") or []
        impossible = ""
        for i, term in enumerate(selector_terms):
            where = (
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                f".nodeSelectorTerms[{i}]"
            )
            parts = _node_selector_term(term, where)
            why = _matches_no_node(parts, sel_reqs)
            if why is None:
                required_terms.append(Requirements(parts))
            else:  # a term no node matches is left out; with none left, the pod fits nowhere
                impossible = f"{where}: {why}"
        if selector_terms and not required_terms:
            raise PodError(impossible)
        prefs = na.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        for i, pref in enumerate(prefs):
            parts = _node_selector_term(
                pref.get("preference") or {},
                f"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]",
            )
            if _matches_no_node(parts, sel_reqs) is None:
                preferred_terms.append((int(pref.get("weight") or 1), Requirements(parts)))
        preferred_terms.sort(key=lambda p: -p[0])
    except PodError as exc:
        invalid = str(exc)

    try:
        tolerations = tuple(Toleration.from_dict(t) for t in spec.get("tolerations") or [])
    except ValueError as exc:
        raise PodError(f"spec.tolerations: {exc}") from None

    spreads = []
    for i, tsc in enumerate(spec.get("topologySpreadConstraints") or []):
        where = f"spec.topologySpreadConstraints[{i}]"
        key = tsc.get("topologyKey")
        if not key:
            raise PodError(f"{where}.topologyKey is required")
        skew = tsc.get("maxSkew", 1)
        if not isinstance(skew, int) or skew < 1:
            raise PodError(f"{where}.maxSkew must be a positive integer")
        when = tsc.get("whenUnsatisfiable", "DoNotSchedule")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise PodError(f"{where}.whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway")
        extra = {k: labels[k] for k in tsc.get("matchLabelKeys") or [] if k in labels}
        spreads.append(
            SpreadConstraint(
                L.normalize(str(key)),
                skew,
                when == "DoNotSchedule",
                LabelSelector.parse(tsc.get("labelSelector"), extra),
                tsc.get("minDomains"),
                tsc.get("nodeAffinityPolicy", "Honor") == "Honor",
                tsc.get("nodeTaintsPolicy", "Ignore") == "Honor",
            )
        )

    aff = spec.get("affinity") or {}
    pa = aff.get("podAffinity") or {}
    paa = aff.get("podAntiAffinity") or {}
    base = "spec.affinity"

    def terms(block: Mapping[str, Any], kind: str) -> tuple[AffinityTerm, ...]:
        return tuple(
            _affinity_term(
                t, labels, f"{base}.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}]"
            )
            for i, t in enumerate(block.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        )

    def weighted(block: Mapping[str, Any], kind: str) -> tuple[tuple[int, AffinityTerm], ...]:
        out = [
            (
                int(t.get("weight") or 1),
                _affinity_term(
                    t.get("podAffinityTerm") or {},
                    labels,
                    f"{base}.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}]",
                ),
            )
            for i, t in enumerate(
                block.get("preferredDuringSchedulingIgnoredDuringExecution") or []
            )
        ]
        out.sort(key=lambda p: -p[0])
        return tuple(out)

    ports = set()
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                ports.add(
                    (
                        str(p.get("hostIP") or "0.0.0.0"),
                        int(p["hostPort"]),
                        str(p.get("protocol") or "TCP"),
                    )
                )
    pvcs = _claim_names(spec.get("volumes") or [])
    return _SpecParts(
        requests=requests,
        node_selector=node_selector,
        required_terms=tuple(required_terms),
        preferred_terms=tuple(preferred_terms),
        tolerations=tolerations,
        spreads=tuple(spreads),
        affinity=terms(pa, "podAffinity"),
        preferred_affinity=weighted(pa, "podAffinity"),
        anti_affinity=terms(paa, "podAntiAffinity"),
        preferred_anti_affinity=weighted(paa, "podAntiAffinity"),
        host_ports=frozenset(ports),
        pvcs=pvcs,
        invalid=invalid,
    )


def parse_pod(
    raw: Mapping[str, Any],
    runtime_overheads: Mapping[str, Resources] | None = None,
    memo: SpecMemo | None = None,
) -> Pod:
    """Parse a Pod manifest. Structural problems raise PodError; constraints Karpenter would
    reject (restricted labels, matchFields) mark the pod ``invalid`` with the reason instead.

    With ``memo`` (made with the same ``runtime_overheads``), a spec equal to one already
    parsed is not parsed again (``SpecMemo``)."""
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    name = str(meta.get("name") or meta.get("generateName") or "")
    if not name:
        raise PodError("metadata.name is required")
    namespace = str(meta.get("namespace") or "default")
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    owner = owner or next(iter(meta.get("ownerReferences") or []), None)
    shared = memo is not None
    if memo is not None:
        parts = memo.parts(spec, labels)
    else:
        parts = _parse_spec(spec, labels, runtime_overheads)
    return Pod(
        namespace=namespace,
        name=name,
        uid=str(meta.get("uid") or f"{namespace}/{name}"),
        labels=labels,
        requests=dict(parts.requests),
        node_selector=parts.node_selector,
        required_terms=list(parts.required_terms),
        preferred_terms=list(parts.preferred_terms),
        tolerations=parts.tolerations,
        spreads=parts.spreads,
        affinity=parts.affinity,
        preferred_affinity=parts.preferred_affinity,
        anti_affinity=parts.anti_affinity,
        preferred_anti_affinity=parts.preferred_anti_affinity,
        host_ports=parts.host_ports,
        pvcs=parts.pvcs,
        node_name=spec.get("nodeName") or None,
        priority=int(spec.get("priority") or 0),
        owner_kind=str(owner.get("kind")) if owner else None,
        owner_name=str(owner.get("name")) if owner else None,
        phase=str(status.get("phase") or "Pending"),
        deleting=bool(meta.get("deletionTimestamp")),
        invalid=parts.invalid,
        spec_parts=parts if shared else None,
    )


def _claim_names(volumes: list[Any]) -> tuple[str, ...]:
    """The PVCs a pod's volumes name; a claim without a name is refused, as the API does."""
    names = []
    for i, v in enumerate(volumes):
        claim = v.get("persistentVolumeClaim")
        if claim:
            if not claim.get("claimName"):
                raise PodError(f"spec.volumes[{i}].persistentVolumeClaim.claimName is required")
            names.append(str(claim["claimName"]))
    return tuple(names)
