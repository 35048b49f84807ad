"""Valid `joinery plan` inputs and hypothesis strategies that break them in every way a user's
file can be broken: wrong types, huge and tiny numbers, unicode, missing and extra fields,
deep nesting, shared objects (written as YAML anchors and aliases), and damaged text."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.support.catalogs import catalog
from tests.support.disruption import bound, claim_for, managed, pdb, pool
from tests.support.labels import ZONE
from tests.support.manifests import (
    daemonset,
    node,
    nodeclaim,
    nodepool,
    pod,
    pod_affinity,
    pvc,
    spread,
    storage_class,
    taint,
    toleration,
)

NOW = "2026-11-23T12:00:00Z"


def _provisioning() -> list[Any]:
    web = {"app": "web"}
    return [
        nodepool(limits={"cpu": "100"}, taints=[taint("team", "NoSchedule", "a")]),
        nodepool("general"),
        pod("web-0", "500m", "1Gi", labels=web, topologySpreadConstraints=[spread(ZONE, web)]),
        pod("web-1", "1", "512Mi", labels=web, affinity=pod_affinity(ZONE, web, anti=True)),
        pod(
            "db",
            "2",
            "4Gi",
            tolerations=[toleration("team", value="a")],
            volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        ),
        pvc("data", storage_class="zonal"),
        storage_class("zonal", ["us-east-1a"]),
        daemonset("agent", "100m", "128Mi"),
        node("old-node", "2", "8Gi"),
        *_volume_limits(),
        nodeclaim("claim-1", instance_type="c5.large"),
        {"apiVersion": "v1", "kind": "List", "items": [pod("batch", "250m", "256Mi")]},
    ]


def _volume_limits() -> list[Any]:
    """A CSINode limit on old-node, and a pod there with a CSI PV and an ephemeral volume."""
    ebs = "ebs.csi.aws.com"
    scratch = {"volumeClaimTemplate": {"spec": {"storageClassName": "zonal"}}}
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "old-node"},
            "spec": {"drivers": [{"name": ebs, "nodeID": "i-old", "allocatable": {"count": 2}}]},
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-logs"},
            "spec": {"csi": {"driver": ebs, "volumeHandle": "vol-1"}},
        },
        pvc("logs", volume_name="pv-logs"),
        pod(
            "logger",
            "100m",
            "64Mi",
            node_name="old-node",
            volumes=[
                {"name": "logs", "persistentVolumeClaim": {"claimName": "logs"}},
                {"name": "scratch", "ephemeral": scratch},
            ],
        ),
    ]


def _cluster() -> list[Any]:
    a, b = managed("a"), managed("b")
    return [
        pool(),
        a,
        claim_for(a),
        b,
        claim_for(b),
        bound("web-0", "a", labels={"app": "web"}),
        bound("web-1", "b", labels={"app": "web"}),
        pdb("web", {"app": "web"}, max_unavailable=1),
        pod("pending", "1", "1Gi"),
    ]


def _catalog() -> dict[str, Any]:
    return catalog(["c5.large", "m5.xlarge", "m6g.large"])


# Built once: every example deep-copies one, so building them is off the hot path.
PROVISIONING = _provisioning()
CLUSTER = _cluster()
CATALOG = _catalog()

TRICKY_STRINGS = [
    "",
    "1e400",
    "-1e400",
    "1e-400",
    "-1",
    "0",
    "NaN",
    ".inf",
    "1Ei",
    "99999999999999999999Ki",
    "1.5.5",
    "In",
    "NotIn",
    "Exists",
    "DoesNotExist",
    "Gt",
    "Lt",
    "NoSchedule",
    "DoNotSchedule",
    "ScheduleAnyway",
    "kubernetes.io/hostname",
    ZONE,
    "karpenter.sh/capacity-type",
    "karpenter.sh/nodepool",
    "2026-11-23T12:00:00Z",
    "not-a-date",
    "100m",
    "\u0000",
    "\u202e",
    "\u210c\U0001d522\U0001d529",
    "a" * 300,
    "@every 1h",
    "* * * * *",
    "10%",
    "150%",
    "-5%",
    "Never",
    "WhenEmpty",
    "WhenEmptyOrUnderutilized",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**63, 2**64, 10**400 // 10**380]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, 5e-324, -0.0, 1e-400]),
    st.text(max_size=12),
    st.sampled_from(TRICKY_STRINGS),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(
        st.one_of(st.text(max_size=6), st.sampled_from(TRICKY_STRINGS)), scalars, max_size=3
    ),
)

Path = tuple[Any, ...]


def _paths(obj: Any, prefix: Path = (), depth: int = 0) -> list[Path]:
    """Every place inside ``obj`` (a key of a mapping or an index of a list), to a depth of
    40: mutations can nest values inside each other (or a value inside itself), and the
    walk must not recurse without end."""
    out: list[Path] = []
    if depth > 40:
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k), depth + 1))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i), depth + 1))
    return out


def _parent(obj: Any, path: Path) -> Any:
    for step in path[:-1]:
        obj = obj[step]
    return obj


def _deep(depth: int, leaf: Any) -> Any:
    out = leaf
    for i in range(depth):
        out = [out] if i % 2 else {"x": out}
    return out


EDIT_COUNTS = st.integers(1, 4)
EDIT_KINDS = st.sampled_from(["replace", "replace", "replace", "delete", "extra", "deep", "alias"])
EXTRA_KEYS = st.text(max_size=8)
DEEP_LEVELS = st.integers(20, 120)


def _pick(draw: st.DrawFn, paths: list[Path]) -> Path:
    """One of ``paths``, drawn as an index: a strategy made per draw (``sampled_from`` of a
    fresh list) is validated anew by hypothesis each time, which was over half of the fuzz
    tests' time; an index draws the same choices and shrinks towards the first path."""
    return paths[draw(st.integers(0, len(paths) - 1))]


@st.composite
def mutate(draw: st.DrawFn, base: Any) -> Any:
    """``base`` deep-copied with one to four random edits."""
    doc = copy.deepcopy(base)
    for _ in range(draw(EDIT_COUNTS)):
        paths = _paths(doc)
        if not paths:
            break
        path = _pick(draw, paths)
        parent = _parent(doc, path)
        key = path[-1]
        kind = draw(EDIT_KINDS)
        if kind == "replace":
            parent[key] = draw(values)
        elif kind == "delete":
            del parent[key]
        elif kind == "extra":
            target = parent[key]
            if isinstance(target, dict):
                target[draw(EXTRA_KEYS)] = draw(values)
            elif isinstance(target, list):
                target.append(draw(values))
            else:
                parent[key] = [target, draw(values)]
        elif kind == "deep":
            parent[key] = _deep(draw(DEEP_LEVELS), parent[key])
        else:  # the same object in two places: the YAML dump writes an anchor and an alias
            other = _pick(draw, paths)
            if other[: len(path)] != path and path[: len(other)] != other:  # no cycles
                parent[key] = _parent(doc, (*other, None))
    return doc


@st.composite
def damaged_text(draw: st.DrawFn, text: str) -> bytes:
    """The file's bytes with a few cut, inserted or replaced (syntax and encoding errors)."""
    data = bytearray(text.encode())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["cut", "insert", "byte"]))
        if op == "cut":
            del data[at : at + draw(st.integers(1, 40))]
        elif op == "insert":
            data[at:at] = draw(
                st.sampled_from(
                    [
                        b"\xff",
                        b"\x00",
                        b"&a ",
                        b"*a ",
                        b"*nope",
                        b"<<: *a\n",
                        b"!!binary ",
                        b"!custom ",
                        b"{",
                        b"[",
                        b"]",
                        b"'",
                        b'"',
                        b"\t",
                        b"\n---\n",
                        b": ",
                        b"- ",
                        b"? ",
                        b"%YAML 1.1\n",
                        b"[" * 2000,
                        b"\xef\xbb\xbf",
                        b"\xc3",
                    ]
                )
            )
        else:
            data[at : at + 1] = bytes([draw(st.integers(0, 255))])
    return bytes(data)


def dump(docs: Any) -> str:
    """YAML of the documents; shared objects become anchors and aliases."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(docs, Dumper=dumper, sort_keys=False, allow_unicode=True)


Mutator = Callable[[Any], Any]
