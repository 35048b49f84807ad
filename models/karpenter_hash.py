"""Karpenter's own NodePool template hash (``karpenter.sh/nodepool-hash``, version ``v3``).

Karpenter stamps each NodeClaim with ``hashstructure`` v2's digest of its pool's
``spec.template`` (FNV-1 64-bit; options ``SlicesAsSets``, ``IgnoreZeroValue``, ``ZeroNil``;
requirements excluded) and reads a difference as ``NodePoolDrifted``. Joinery hashes its own
way under its own version (``models.nodepool_hash``); this module computes Karpenter's value,
so a fleet adopted from Karpenter can be checked against the pool it was launched from, and
the sandbox can make NodeClaims exactly as Karpenter leaves them.

The walk below follows hashstructure's rules for the Go types involved: a struct hashes its
type name, then XORs in each non-zero field's (name, value) pair, finishing after each; maps
XOR their (key, value) pairs and finish once; slices (as sets) XOR their items without a
finish; strings hash their bytes; integers their 8 little-endian bytes.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from typing import Any

HASH_VERSION = "v3"
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1
_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def _fnv1(data: bytes) -> int:
    h = _FNV_OFFSET
    for byte in data:
        h = (h * _FNV_PRIME) & _MASK
        h ^= byte
    return h


def _u64(value: int) -> bytes:
    return struct.pack("<Q", value & _MASK)


def _string(text: str) -> int:
    return _fnv1(text.encode())


def _int(value: int) -> int:
    return _fnv1(_u64(value))


def _ordered(a: int, b: int) -> int:
    return _fnv1(_u64(a) + _u64(b))


def _finish(a: int) -> int:
    return _fnv1(_u64(a))


def _struct(name: str, fields: list[tuple[str, int | None]]) -> int:
    """A struct: ``fields`` are (Go field name, hash of its value, or None when zero)."""
    h = _string(name)
    for field, value in fields:
        if value is None:
            continue
        h ^= _ordered(_string(field), value)
        h = _finish(h)
    return h


def _map(values: Mapping[str, Any] | None) -> int | None:
    if values is None:
        return None
    h = 0
    for key, value in values.items():
        h ^= _ordered(_string(str(key)), _string(str(value)))
    return _finish(h)


def _set(items: list[int] | None) -> int | None:
    if items is None:
        return None
    h = 0
    for item in items:
        h ^= item
    return h


def _text(value: Any) -> int | None:
    return _string(str(value)) if value else None


def go_duration_ns(text: str) -> int:
    """Go's ``time.ParseDuration`` for the forms a NodePool holds (``720h``, ``1h30m``)."""
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "0":
        return 0
    total, at = 0.0, 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != at:
            break
        total += float(match.group(1)) * _UNITS_NS[match.group(2)]
        at = match.end()
    if at != len(body) or not body:
        raise ValueError(f"not a duration: {text!r}")
    return sign * int(total)


def _taint(taint: Mapping[str, Any]) -> int:
    return _struct(
        "Taint",
        [
            ("Key", _text(taint.get("key"))),
            ("Value", _text(taint.get("value"))),
            ("Effect", _text(taint.get("effect"))),
            # TimeAdded is never set on a template's taints.
        ],
    )


def _taints(taints: list[Mapping[str, Any]] | None) -> int | None:
    return _set(None if taints is None else [_taint(t) for t in taints])


def _node_class_ref(ref: Mapping[str, Any] | None) -> int | None:
    if ref is None:
        return None  # a nil pointer: zero, left out
    return _struct(
        "NodeClassReference",
        [
            ("Kind", _text(ref.get("kind"))),
            ("Name", _text(ref.get("name"))),
            ("Group", _text(ref.get("group"))),
        ],
    )


def _metav1_duration(text: str | None) -> int | None:
    if text is None:
        return None
    ns = go_duration_ns(text)
    return _struct("Duration", [("Duration", _int(ns) if ns else None)])


def _nillable_duration(text: str | None) -> int | None:
    """Karpenter's NillableDuration: a *time.Duration plus its raw text (not hashed). Read
    from the API it always has the raw text, so it is never zero when set; ``Never`` leaves
    the duration nil."""
    if text is None:
        return None
    # A non-nil pointer is not zero, even to a zero duration: ``0s`` is hashed.
    ns = None if text == "Never" else go_duration_ns(text)
    return _struct("NillableDuration", [("Duration", None if ns is None else _int(ns))])


def nodepool_hash(template: Mapping[str, Any]) -> str:
    """Karpenter's ``karpenter.sh/nodepool-hash`` of a NodePool's ``spec.template`` (the
    wire form, as the API server returns it: defaults applied)."""
    meta = template.get("metadata")
    spec = template.get("spec") or {}
    meta_hash = None
    if meta is not None:
        labels, annotations = _map(meta.get("labels")), _map(meta.get("annotations"))
        if labels is not None or annotations is not None:
            meta_hash = _struct("ObjectMeta", [("Labels", labels), ("Annotations", annotations)])
    spec_fields = [
        ("Taints", _taints(spec.get("taints"))),
        ("StartupTaints", _taints(spec.get("startupTaints"))),
        ("NodeClassRef", _node_class_ref(spec.get("nodeClassRef"))),
        ("TerminationGracePeriod", _metav1_duration(spec.get("terminationGracePeriod"))),
        ("ExpireAfter", _nillable_duration(spec.get("expireAfter"))),
    ]
    # Requirements are not hashed but still make the spec non-zero.
    present = spec.get("requirements") is not None or any(v is not None for _, v in spec_fields)
    spec_hash = _struct("NodeClaimTemplateSpec", spec_fields) if present else None
    return str(_struct("NodeClaimTemplate", [("ObjectMeta", meta_hash), ("Spec", spec_hash)]))
