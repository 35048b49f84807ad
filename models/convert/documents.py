"""The whole input at once: which documents convert, where moved kubelet blocks land.

Documents come out in input order. An EC2NodeClass made from a Provisioner's inline
``provider`` comes just before its NodePool. A kubelet block leaves its NodePool for the
EC2NodeClass the pool names (v1 keeps kubelet there); when pools sharing a class disagree,
the v1 guide's remedy is applied: the class stays with the pools that set no kubelet (or
with the first configuration met), and each other configuration gets a copy of the class
named ``<class>-<first pool>``, which that configuration's pools then name.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from models.convert import nodeclass, nodepool
from models.convert.common import Conversion, ConversionError, Obj, Subject, metadata

PROVISIONER = ("karpenter.sh/v1alpha5", "Provisioner")
NODE_TEMPLATE = ("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate")
BETA_POOL = ("karpenter.sh/v1beta1", "NodePool")
BETA_CLASS = ("karpenter.k8s.aws/v1beta1", "EC2NodeClass")
V1_CLASS = ("karpenter.k8s.aws/v1", "EC2NodeClass")
POOL_API = "karpenter.sh/v1"
CLASS_API = "karpenter.k8s.aws/v1"


@dataclass
class _Pool:
    doc: Obj
    kubelet: Obj | None
    nodeclass: str | None
    subject: Subject


@dataclass
class _State:
    out: list[Obj] = field(default_factory=list)
    classes: dict[str, Obj] = field(default_factory=dict)
    pools: list[_Pool] = field(default_factory=list)


def _subject(doc: Obj, index: int, notes: list[str]) -> Subject:
    kind = str(doc.get("kind"))
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise ConversionError(f"document {index + 1} ({kind}): metadata.name: required")
    return Subject(kind, name, notes)


def _spec(subject: Subject, doc: Obj) -> Obj:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        raise subject.error("spec", "required: a mapping")
    return spec


def _add_class(state: _State, subject: Subject, doc: Obj) -> None:
    name = doc["metadata"]["name"]
    if name in state.classes:
        raise subject.error("metadata.name", f"a second EC2NodeClass named {name}")
    state.classes[name] = doc
    state.out.append(doc)


def _class_doc(meta: Obj, spec: Obj) -> Obj:
    return {"apiVersion": CLASS_API, "kind": "EC2NodeClass", "metadata": meta, "spec": spec}


def _pool_from_beta(state: _State, subject: Subject, meta: Obj, beta: Obj) -> None:
    pool = nodepool.beta_to_v1(subject, beta)
    doc = {"apiVersion": POOL_API, "kind": "NodePool", "metadata": meta, "spec": pool.spec}
    state.out.append(doc)
    state.pools.append(_Pool(doc, pool.kubelet, pool.nodeclass, subject))


def _one(state: _State, doc: Obj, index: int, notes: list[str], role: str | None) -> None:
    kind = (doc.get("apiVersion"), doc.get("kind"))
    if kind not in (PROVISIONER, NODE_TEMPLATE, BETA_POOL, BETA_CLASS):
        if kind == V1_CLASS and isinstance(doc.get("metadata"), dict):
            _add_class(state, _subject(doc, index, notes), doc)
        else:
            state.out.append(doc)
        return
    subject = _subject(doc, index, notes)
    spec = _spec(subject, doc)
    meta = metadata(subject, doc)
    if kind == NODE_TEMPLATE:
        beta = nodeclass.alpha_to_beta(subject, spec)
        _add_class(state, subject, _class_doc(meta, nodeclass.beta_to_v1(subject, beta, role=role)))
    elif kind == BETA_CLASS:
        _add_class(state, subject, _class_doc(meta, nodeclass.beta_to_v1(subject, spec, role=role)))
    elif kind == PROVISIONER:
        alpha = nodepool.alpha_to_beta(subject, spec)
        if alpha.provider is not None:
            beta_class = nodeclass.alpha_to_beta(subject, alpha.provider, inline=True)
            class_subject = Subject("EC2NodeClass", subject.name, notes)
            v1_class = nodeclass.beta_to_v1(class_subject, beta_class, role=role)
            _add_class(state, subject, _class_doc({"name": subject.name}, v1_class))
        _pool_from_beta(state, subject, meta, alpha.spec)
    else:
        _pool_from_beta(state, subject, meta, spec)


def _key(kubelet: Obj | None) -> str:
    return json.dumps(kubelet, sort_keys=True)


def _place_kubelets(state: _State) -> None:
    """Move each pool's kubelet block to its EC2NodeClass, copying a class where pools that
    share it disagree."""
    by_class: dict[str, list[_Pool]] = {}
    for pool in state.pools:
        if pool.nodeclass is not None:
            by_class.setdefault(pool.nodeclass, []).append(pool)
    for name, pools in by_class.items():
        if all(p.kubelet is None for p in pools):
            continue
        target = state.classes.get(name)
        if target is None:
            for pool in pools:
                if pool.kubelet is not None:
                    pool.subject.drop(
                        "spec.template.spec.kubelet",
                        f"EC2NodeClass {name} is not in the input; add this kubelet block to "
                        "its spec.kubelet by hand, dropped",
                    )
            continue
        groups: dict[str, list[_Pool]] = {}
        existing = target["spec"].get("kubelet")
        for pool in pools:
            # A pool without a kubelet block takes what the class already has.
            groups.setdefault(
                _key(pool.kubelet if pool.kubelet is not None else existing), []
            ).append(pool)
        keep = _key(existing) if _key(existing) in groups else next(iter(groups))
        for key, members in groups.items():
            kubelet = members[0].kubelet if members[0].kubelet is not None else existing
            if key == keep:
                if kubelet is not None:
                    target["spec"]["kubelet"] = kubelet
                continue
            clone = copy.deepcopy(target)
            clone_name = f"{name}-{members[0].subject.name}"
            clone["metadata"] = {"name": clone_name}
            clone["spec"]["kubelet"] = kubelet
            if clone_name in state.classes:
                raise members[0].subject.error(
                    "spec.template.spec.kubelet",
                    f"needs its own EC2NodeClass {clone_name}, and that name is taken",
                )
            state.classes[clone_name] = clone
            state.out.insert(state.out.index(target) + 1, clone)
            for pool in members:
                pool.doc["spec"]["template"]["spec"]["nodeClassRef"]["name"] = clone_name
                pool.subject.say(
                    f"spec.template.spec.kubelet: differs from other NodePools of EC2NodeClass "
                    f"{name}; moved to a copy of it, EC2NodeClass {clone_name}"
                )


def _flatten(docs: list[Any]) -> list[Obj]:
    out: list[Obj] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ConversionError(f"document {i + 1}: expected a mapping, got {type(doc).__name__}")
        if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.extend(_flatten(doc["items"]))
        else:
            out.append(doc)
    return out


def convert_documents(docs: list[Any], *, role: str | None = None) -> Conversion:
    """Every old-API Karpenter object in ``docs`` as v1; other documents unchanged.

    ``role`` names the node role for classes whose old object named neither a role nor an
    instance profile. Raises ``ConversionError`` (one line) on input that cannot convert.
    """
    result = Conversion()
    state = _State()
    for index, doc in enumerate(_flatten(docs)):
        _one(state, doc, index, result.notes, role)
    _place_kubelets(state)
    result.documents = state.out
    return result
