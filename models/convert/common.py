"""What every conversion step shares: the notes it leaves, its error, small field helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

# Metadata an exported object carries that belongs to its old cluster, not to a manifest.
_KEPT_ANNOTATIONS_DROPPED = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})


class ConversionError(ValueError):
    """Input that cannot be converted: the message is one line naming object and field."""


@dataclass
class Conversion:
    """The converted documents, in input order, and one note per field dropped."""

    documents: list[Obj] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Subject:
    """The object being converted, for notes and errors that name it."""

    kind: str
    name: str
    notes: list[str]

    def drop(self, path: str, why: str = "no v1 equivalent, dropped") -> None:
        self.notes.append(f"{self.kind} {self.name}: {path}: {why}")

    def say(self, text: str) -> None:
        self.notes.append(f"{self.kind} {self.name}: {text}")

    def error(self, path: str, problem: str) -> ConversionError:
        return ConversionError(f"{self.kind} {self.name}: {path}: {problem}")


def mapping(subject: Subject, value: Any, path: str) -> Obj:
    """``value`` as a mapping (absent is empty); anything else is bad input."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise subject.error(path, f"expected a mapping, got {type(value).__name__}")
    return value


def sequence(subject: Subject, value: Any, path: str) -> list[Any]:
    """``value`` as a list (absent is empty); anything else is bad input."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise subject.error(path, f"expected a list, got {type(value).__name__}")
    return value


def seconds(subject: Subject, value: Any, path: str) -> str:
    """A v1alpha5 ``ttlSeconds*`` integer as a duration the v1 CRD accepts (``2592000`` is
    ``720h``, ``90`` is ``1m30s``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise subject.error(path, f"expected a non-negative integer of seconds, got {value!r}")
    hours, rest = divmod(value, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"


def metadata(subject: Subject, doc: Obj) -> Obj:
    """The parts of ``metadata`` a manifest keeps: name, labels, annotations (as the
    ``karpenter-convert`` tool kept them), without what the old cluster stamped on it."""
    meta = mapping(subject, doc.get("metadata"), "metadata")
    out: Obj = {"name": meta["name"]}
    labels = mapping(subject, meta.get("labels"), "metadata.labels")
    annotations = {
        k: v
        for k, v in mapping(subject, meta.get("annotations"), "metadata.annotations").items()
        if k not in _KEPT_ANNOTATIONS_DROPPED
    }
    if labels:
        out["labels"] = dict(labels)
    if annotations:
        out["annotations"] = annotations
    return out


def api_group(api_version: str) -> str:
    """``karpenter.k8s.aws/v1beta1`` -> ``karpenter.k8s.aws``."""
    return api_version.rpartition("/")[0] if "/" in api_version else ""
