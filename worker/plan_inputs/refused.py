"""What ``joinery plan`` does with objects asking for fields Joinery does not implement.

The worker refuses them (``models.unimplemented``): a NodePool with ``replicas`` takes no part
in rounds, and the pools of an EC2NodeClass with, say, ``networkInterfaces`` can launch
nothing (their NodeClass is not Ready). The what-if plan does the same, so it never shows a
claim the worker would not make, and says so on stderr: one line per object and field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from models import unimplemented
from scheduling.inputs import Document


@dataclass
class Refusals:
    """The documents to plan with, the pools that may launch nothing, and the warnings."""

    documents: list[Document]
    no_launch: set[str] = field(default_factory=set)  # pools whose EC2NodeClass is refused
    warnings: list[str] = field(default_factory=list)


def _class_ref(pool: Mapping[str, Any]) -> str | None:
    """The NodePool's ``spec.template.spec.nodeClassRef.name``, if it names one."""
    node: Any = pool
    for key in ("spec", "template", "spec", "nodeClassRef"):
        node = node.get(key) if isinstance(node, Mapping) else None
    name = node.get("name") if isinstance(node, Mapping) else None
    return name if isinstance(name, str) else None


def _pool_name(d: Document) -> str:
    meta = d.body.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else "?"


def apply(documents: Sequence[Document], classes: Mapping[str, Document]) -> Refusals:
    """Leave out the NodePools Joinery refuses; name the pools of refused EC2NodeClasses."""
    out = Refusals([])
    pools_of: dict[str, list[str]] = {}
    for d in documents:
        if d.body.get("kind") != "NodePool":
            out.documents.append(d)
            continue
        found = unimplemented.nodepool_fields(d.body)
        for f in found:
            out.warnings.append(f"{d.label()}: {f.line()}; the pool is not planned on")
        if found:
            continue
        out.documents.append(d)
        ref = _class_ref(d.body)
        if ref is not None:
            pools_of.setdefault(ref, []).append(_pool_name(d))
    for name, doc in classes.items():
        found = unimplemented.nodeclass_fields(doc.body)
        pools = pools_of.get(name, [])
        for f in found:
            where = "no NodePool uses it"
            if pools:
                where = f"NodePools that can launch nothing: {', '.join(pools)}"
            out.warnings.append(f"{doc.label()}: {f.line()}; {where}")
        if found:
            out.no_launch.update(pools)
    return out
