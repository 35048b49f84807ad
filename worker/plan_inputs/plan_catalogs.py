"""Each NodePool's catalog for ``joinery plan``, from the EC2NodeClasses in its inputs.

The worker plans every pool on the catalog its own EC2NodeClass sees
(``activities.planning.plan.pool_catalogs``): offerings only in the zones where the
NodeClass has a subnet, allocatable after its AMI family, kubelet reserve and ``maxPods``.
A what-if plan that gave every pool one catalog would put a pod that needs zone b on a pool
whose NodeClass has no subnet there: a claim the worker never makes. So the command does
what it can without EC2:

- zones: a NodeClass's resolved subnets, ``status.subnets[].zone`` (as Karpenter writes them
  and ``kubectl get ec2nodeclass -o yaml`` shows them), make the offerings in every other
  zone unavailable to its pools; a NodeClass whose status lists no subnet (a hand-written
  one) keeps every zone, since its selectors cannot be resolved offline;
- allocatable: ``--catalog NAME=FILE`` gives the EC2NodeClass ``NAME`` its own catalog file
  (what ``joinery catalog --nodeclass`` writes: sizes after that NodeClass's AMI family,
  kubelet and ``maxPods``), narrowed to its zones in turn; the plain ``--catalog FILE`` is
  every other pool's, and the round's.

A pool whose NodeClass is not in the inputs sees the plain catalog, as the worker gives a
pool whose NodeClass is missing the provider's catalog. Pools of one NodeClass share one
list, and a pool whose view is the plain catalog gets no list of its own, so inputs without
EC2NodeClasses plan exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from activities.kubernetes.resources import EC2NODECLASS
from models.instancetype import InstanceType, Offering
from scheduling.inputs import Document
from worker.usage import UsageError

NODECLASS_KIND = EC2NODECLASS.kind
NODECLASS_GROUP = f"{EC2NODECLASS.group}/"


@dataclass(frozen=True)
class CatalogFiles:
    """``--catalog`` as given: the file for every pool, and files of named EC2NodeClasses."""

    default: str
    per_class: Mapping[str, str]


def catalog_files(values: Sequence[str], exists: Callable[[str], bool]) -> CatalogFiles:
    """``--catalog FILE`` once, and ``--catalog NAME=FILE`` at most once per name (a value
    naming an existing file is a file, even with ``=`` in its path)."""
    default: list[str] = []
    per_class: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or exists(value) or value == "-":
            default.append(value)
        elif not name or not path:
            raise UsageError(f"--catalog {value}: expected FILE or NODECLASS=FILE")
        elif name in per_class:
            raise UsageError(f"--catalog {value}: EC2NodeClass {name} has a catalog already")
        else:
            per_class[name] = path
    if len(default) != 1:
        raise UsageError(
            f"--catalog: expected one catalog file for every pool (and NODECLASS=FILE for "
            f"EC2NodeClasses of their own), got {len(default)}"
        )
    return CatalogFiles(default[0], per_class)


@dataclass
class SplitInputs:
    """The inputs sorted in one pass: the planner's documents, the node classes of each
    provider by name (read here only), and the NodePools (which stay among the documents)."""

    documents: list[Document]
    ec2: dict[str, Document]
    aks: dict[str, Document]
    pools: list[Document]


AKS_KIND = "AKSNodeClass"
# Node-class kind → (its apiVersion's group prefix, which SplitInputs field holds it).
_CLASS_KINDS = {NODECLASS_KIND: (NODECLASS_GROUP, "ec2"), AKS_KIND: ("karpenter.azure.com/", "aks")}


def split_inputs(documents: Sequence[Document]) -> SplitInputs:
    """One pass over the inputs (tens of thousands of Pods): node classes out, pools noted."""
    out = SplitInputs([], {}, {}, [])
    rest = out.documents
    for d in documents:
        kind = d.body.get("kind")
        if kind == "NodePool":
            out.pools.append(d)
        elif kind in _CLASS_KINDS:
            prefix, field = _CLASS_KINDS[kind]
            if str(d.body.get("apiVersion", "")).startswith(prefix):
                _add_class(d, out.ec2 if field == "ec2" else out.aks, kind)
                continue
        rest.append(d)
    return out


def _add_class(d: Document, classes: dict[str, Document], kind: str) -> None:
    meta = d.body.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        raise UsageError(f"{d.label()}: metadata.name: required")
    if name in classes:
        raise UsageError(f"{d.label()}: metadata.name: duplicate {kind}")
    classes[name] = d


def subnet_zones(d: Document) -> frozenset[str] | None:
    """The zones of the NodeClass's resolved subnets (``status.subnets``); None when its
    status lists none."""
    status = d.body.get("status")
    if status is None:
        return None
    if not isinstance(status, Mapping):
        raise UsageError(f"{d.label()}: status: expected a mapping")
    subnets = status.get("subnets")
    if subnets is None:
        return None
    if not isinstance(subnets, list):
        raise UsageError(f"{d.label()}: status.subnets: expected a list")
    zones: set[str] = set()
    for i, s in enumerate(subnets):
        zone = s.get("zone") if isinstance(s, Mapping) else None
        if not isinstance(zone, str) or not zone:
            raise UsageError(f"{d.label()}: status.subnets[{i}].zone: expected a zone name")
        zones.add(zone)
    return frozenset(zones) or None


def in_zones(types: list[InstanceType], zones: frozenset[str] | None) -> list[InstanceType]:
    """``types`` as a NodeClass with subnets in ``zones`` sees them: offerings elsewhere are
    unavailable (as the EC2 provider marks them); ``types`` itself when nothing changes."""
    if zones is None or all(o.zone in zones for it in types for o in it.offerings):
        return types
    out = []
    for it in types:
        offers = tuple(
            Offering(o.zone, o.capacity_type, o.price, False)
            if o.available and o.zone not in zones
            else o
            for o in it.offerings
        )
        out.append(InstanceType(it.name, it.capacity, it.overhead, it.requirements, offers))
    return out


def class_ref(pool: Mapping[str, Any]) -> str | None:
    """The NodePool's ``spec.template.spec.nodeClassRef.name`` (the planner validates the
    pool itself; a malformed one is its error to report)."""
    node: Any = pool
    for key in ("spec", "template", "spec", "nodeClassRef"):
        node = node.get(key) if isinstance(node, Mapping) else None
    name = node.get("name") if isinstance(node, Mapping) else None
    return name if isinstance(name, str) else None


def pool_name(pool: Mapping[str, Any]) -> str | None:
    """The NodePool's ``metadata.name`` (None when it has none: the planner reports that)."""
    meta = pool.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else None


def pool_catalogs(
    documents: Sequence[Document],
    classes: Mapping[str, Document],
    default: list[InstanceType],
    per_class: Mapping[str, list[InstanceType]],
) -> dict[str, list[InstanceType]]:
    """Pool name → its own catalog, for the pools whose view is not ``default`` itself."""
    if not classes:
        return {}  # every pool sees the plain catalog (no document is looked at again)
    views: dict[str, list[InstanceType]] = {}
    own: dict[str, list[InstanceType]] = {}
    for d in documents:
        if d.body.get("kind") != "NodePool":
            continue
        meta = d.body.get("metadata")
        pool = meta.get("name") if isinstance(meta, Mapping) else None
        ref = class_ref(d.body)
        if not isinstance(pool, str) or ref is None or ref not in classes:
            continue
        view = views.get(ref)
        if view is None:
            view = views[ref] = in_zones(per_class.get(ref, default), subnet_zones(classes[ref]))
        if view is not default:
            own[pool] = view
    return own
