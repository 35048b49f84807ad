"""The cluster the oracle judges against: Kubernetes objects as plain dicts, by kind.

Pods are bound by ``spec.nodeName``. Succeeded and Failed pods are not in the scheduler's
cache, so they are left out here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Obj = Mapping[str, Any]


def name_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name"))


def namespace_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def key_of(pod: Obj) -> str:
    return f"{namespace_of(pod)}/{name_of(pod)}"


def pod_labels(pod: Obj) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((pod.get("metadata") or {}).get("labels") or {}).items()}


def bound_to(pod: Obj) -> str | None:
    return (pod.get("spec") or {}).get("nodeName") or None


def with_node(pod: Obj, node: str) -> dict[str, Any]:
    """A copy of ``pod`` bound to ``node``."""
    spec = dict(pod.get("spec") or {})
    spec["nodeName"] = node
    return {**pod, "spec": spec}


@dataclass
class Cluster:
    """Nodes by name, bound pods, and the objects filters read (namespaces for
    namespaceSelector, volumes, CSINodes for attach limits, RuntimeClasses for overhead)."""

    nodes: dict[str, Obj] = field(default_factory=dict)
    pods: list[Obj] = field(default_factory=list)
    namespaces: dict[str, Obj] = field(default_factory=dict)
    pvcs: dict[tuple[str, str], Obj] = field(default_factory=dict)
    pvs: dict[str, Obj] = field(default_factory=dict)
    storage_classes: dict[str, Obj] = field(default_factory=dict)
    csinodes: dict[str, Obj] = field(default_factory=dict)
    runtime_classes: dict[str, Obj] = field(default_factory=dict)

    @classmethod
    def from_objects(cls, objects: Iterable[Obj]) -> Cluster:
        """Every kind the filters read; other kinds are ignored. Pods without a node are not
        part of the cluster (they are what gets placed)."""
        c = cls()
        for o in objects:
            kind = o.get("kind")
            if kind == "Node":
                c.nodes[name_of(o)] = o
            elif kind == "Pod":
                phase = (o.get("status") or {}).get("phase")
                if bound_to(o) and phase not in ("Succeeded", "Failed"):
                    c.pods.append(o)
            elif kind == "Namespace":
                c.namespaces[name_of(o)] = o
            elif kind == "PersistentVolumeClaim":
                c.pvcs[(namespace_of(o), name_of(o))] = o
            elif kind == "PersistentVolume":
                c.pvs[name_of(o)] = o
            elif kind == "StorageClass":
                c.storage_classes[name_of(o)] = o
            elif kind == "CSINode":
                c.csinodes[name_of(o)] = o
            elif kind == "RuntimeClass":
                c.runtime_classes[name_of(o)] = o
        return c

    def copy(self) -> Cluster:
        return Cluster(
            dict(self.nodes),
            list(self.pods),
            self.namespaces,
            self.pvcs,
            self.pvs,
            self.storage_classes,
            dict(self.csinodes),
            self.runtime_classes,
        )

    def pods_on(self, node: str) -> list[Obj]:
        return [p for p in self.pods if bound_to(p) == node and bound_to(p) in self.nodes]

    def placed(self) -> list[tuple[Obj, Obj]]:
        """(pod, node) for every pod bound to a node that exists."""
        return [(p, self.nodes[n]) for p in self.pods if (n := bound_to(p)) in self.nodes]

    def namespace_labels(self, ns: str) -> dict[str, str]:
        obj = self.namespaces.get(ns) or {}
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return {str(k): str(v) for k, v in labels.items()}

    def remove_node(self, node: str) -> list[Obj]:
        """Remove a node; returns the pods that were on it (now unbound from the cluster)."""
        self.nodes.pop(node, None)
        self.csinodes.pop(node, None)
        gone = [p for p in self.pods if bound_to(p) == node]
        self.pods = [p for p in self.pods if bound_to(p) != node]
        return gone
