"""Pod specs parsed once per distinct content (``SpecMemo``): replicas share a parse, and two
pods whose specs differ in anything the parse reads never do."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from models.catalog import load_catalog
from scheduling.inputs import Document, build_problem
from scheduling.pods import SPEC_FIELDS, PodError, SpecMemo, _parse_spec, parse_pod
from scheduling.solver import RelaxState, Solver
from tests.support.catalogs import catalog
from tests.support.labels import ZONE
from tests.support.manifests import (
    node,
    node_affinity,
    nodepool,
    pod,
    pod_affinity,
    req,
    spread,
    toleration,
)

FULL_SPEC: dict[str, Any] = pod(
    "p",
    "250m",
    "512Mi",
    labels={"app": "web", "tier": "a"},
    node_selector={"kubernetes.io/arch": "amd64"},
    tolerations=[toleration("dedicated", value="web", effect="NoSchedule")],
    affinity={
        **node_affinity([req(ZONE, "In", "zone-a", "zone-b")]),
        **pod_affinity("kubernetes.io/hostname", {"app": "web"}, anti=True),
    },
    spread=[spread(labels={"app": "web"}, matchLabelKeys=["tier"])],
    host_port=8080,
    pvcs=["data"],
    runtimeClassName="kata",
    overhead={"cpu": "10m"},
    initContainers=[{"name": "init", "resources": {"requests": {"cpu": "100m"}}}],
)["spec"]


def _pod(name: str, spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    metadata = {"name": name, "namespace": "default", "uid": f"uid-{name}", **meta}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _fields(p: Any) -> dict[str, Any]:
    """Everything a parsed pod says, for comparison with the parse made without a memo."""
    return {f: getattr(p, f) for f in type(p).__dataclass_fields__ if f != "spec_parts"}


def _parse_both(*raws: dict[str, Any]) -> list[Any]:
    """Parse with one memo, and check each against the parse made without it."""
    memo = SpecMemo({"kata": {"cpu": 5}})
    out = []
    for raw in raws:
        with_memo = parse_pod(raw, {"kata": {"cpu": 5}}, memo)
        alone = parse_pod(raw, {"kata": {"cpu": 5}})
        assert repr(_fields(with_memo)) == repr(_fields(alone))
        out.append(with_memo)
    return out


def test_replicas_share_one_parse_and_keep_their_own_identity() -> None:
    a, b = _parse_both(
        _pod("web-1", copy.deepcopy(FULL_SPEC), labels={"app": "web", "tier": "a"}),
        _pod(
            "web-2",
            {**copy.deepcopy(FULL_SPEC), "nodeName": "node-b", "priority": 7},
            labels={"app": "web", "tier": "a"},
            ownerReferences=[{"kind": "ReplicaSet", "name": "web-rs", "controller": True}],
        ),
    )
    assert a.node_selector is b.node_selector and a.spreads is b.spreads
    assert (a.name, a.uid, a.node_name, a.priority, a.owner_name) == (
        "web-1",
        "uid-web-1",
        None,
        0,
        None,
    )
    assert (b.name, b.uid, b.node_name, b.priority, b.owner_name) == (
        "web-2",
        "uid-web-2",
        "node-b",
        7,
        "web-rs",
    )
    assert a.requests is not b.requests  # each pod's own (mutable) containers
    assert a.required_terms is not b.required_terms


def _variant(change: Any) -> dict[str, Any]:
    spec = copy.deepcopy(FULL_SPEC)
    change(spec)
    return spec


VARIANTS = {
    "a toleration's value": lambda s: s["tolerations"][0].update(value="api"),
    "a spread's labelSelector": lambda s: s["topologySpreadConstraints"][0].update(
        labelSelector={"matchLabels": {"app": "api"}}
    ),
    "a spread's maxSkew": lambda s: s["topologySpreadConstraints"][0].update(maxSkew=2),
    "an anti-affinity's selector": lambda s: s["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ][0].update(labelSelector={"matchLabels": {"app": "api"}}),
    "a node affinity value": lambda s: s["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"][0].update(values=["zone-c"]),
    "a request": lambda s: s["containers"][0]["resources"]["requests"].update(cpu="300m"),
    "the runtime class": lambda s: s.update(runtimeClassName="other"),
    "a host port": lambda s: s["containers"][0]["ports"][0].update(hostPort=9090),
    "a claim name": lambda s: s["volumes"][0]["persistentVolumeClaim"].update(claimName="d2"),
}


@pytest.mark.parametrize("what", sorted(VARIANTS))
def test_specs_that_differ_in_anything_read_are_parsed_apart(what: str) -> None:
    labels = {"app": "web", "tier": "a"}
    a, b = _parse_both(
        _pod("one", copy.deepcopy(FULL_SPEC), labels=labels),
        _pod("two", _variant(VARIANTS[what]), labels=labels),
    )
    assert repr(_fields(a) | {"name": 0, "uid": 0}) != repr(_fields(b) | {"name": 0, "uid": 0})


def test_a_boolean_and_a_string_are_not_the_same_spec() -> None:
    a, b = _parse_both(
        _pod("one", {"containers": [], "nodeSelector": {"flag": "true"}}),
        _pod("two", {"containers": [], "nodeSelector": {"flag": True}}),
    )
    assert a.node_selector["flag"].values == {"true"}
    assert b.node_selector["flag"].values == {"True"}  # str(True), as before the memo


def test_match_label_keys_read_each_pods_labels() -> None:
    a, b = _parse_both(
        _pod("one", copy.deepcopy(FULL_SPEC), labels={"app": "web", "tier": "a"}),
        _pod("two", copy.deepcopy(FULL_SPEC), labels={"app": "web", "tier": "b"}),
    )
    assert a.spreads[0].selector != b.spreads[0].selector


def test_an_integer_and_a_float_are_not_the_same_spec() -> None:
    memo = SpecMemo()
    good = {"containers": [], "topologySpreadConstraints": [spread(max_skew=1)]}
    bad = {"containers": [], "topologySpreadConstraints": [{**spread(), "maxSkew": 1.0}]}
    parse_pod(_pod("one", good), None, memo)
    with pytest.raises(PodError, match="maxSkew must be a positive integer"):
        parse_pod(_pod("two", bad), None, memo)


def test_a_self_referencing_spec_is_parsed_without_the_memo() -> None:
    c: dict[str, Any] = {"name": "app", "resources": {"requests": {"cpu": "1"}}}
    c["loop"] = c
    memo = SpecMemo()
    a = parse_pod(_pod("one", {"containers": [c]}), None, memo)
    b = parse_pod(_pod("two", {"containers": [c]}), None, memo)
    assert a.requests == b.requests == {"cpu": 1000, "pods": 1000}
    assert len(memo) == 0


def test_a_value_repr_refuses_is_parsed_without_the_memo() -> None:
    spec = {"containers": [{"name": "app", "resources": {}, "note": 10**5000}]}
    memo = SpecMemo()
    assert parse_pod(_pod("one", spec), None, memo).requests == {"pods": 1000}
    assert len(memo) == 0


class _Recording(dict[str, Any]):
    """A spec that notes which of its fields are read."""

    read: set[str]

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def test_the_shared_parse_reads_only_the_keyed_fields() -> None:
    """The memo's key covers every field of the spec the shared parse reads: a field read
    but not keyed would let two different pods share a parse."""
    spec = _Recording(copy.deepcopy(FULL_SPEC))
    spec.read = set()
    _parse_spec(spec, {"app": "web", "tier": "a"}, {"kata": {"cpu": 5}})
    assert spec.read <= set(SPEC_FIELDS)
    assert len(spec.read) >= 8  # the spec above has (nearly) every field


def test_build_problem_keeps_bound_replicas_on_their_nodes() -> None:
    types = load_catalog(catalog())
    spec = {"containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]}
    docs = [
        nodepool(),
        node("n1"),
        node("n2"),
        _pod("a", {**spec, "nodeName": "n1"}),
        _pod("b", {**spec, "nodeName": "n2"}),
        _pod("c", dict(spec)),
    ]
    problem = build_problem([Document(d, f"doc {i}") for i, d in enumerate(docs)], types).problem
    placed = {p.name: n.name for n in problem.nodes for p in n.pods}
    assert placed == {"a": "n1", "b": "n2"}
    assert [p.name for p in problem.pending] == ["c"]


def test_class_parts_are_worked_out_once_per_shared_spec() -> None:
    """Replicas read one ``ClassParts`` (their constraints are their shared parse's); a pod of
    another spec, or parsed without the memo, gets its own."""
    types = load_catalog(catalog())
    spec = {"containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]}
    other = {**spec, "tolerations": [toleration("dedicated", value="web")]}
    docs = [nodepool(), _pod("a", dict(spec)), _pod("b", dict(spec)), _pod("c", other)]
    problem = build_problem([Document(d, f"doc {i}") for i, d in enumerate(docs)], types).problem
    a, b, c = problem.pending
    assert a.spec_parts is b.spec_parts is not None and c.spec_parts is not a.spec_parts
    alone = parse_pod(_pod("d", dict(spec)))
    assert alone.spec_parts is None
    solver = Solver(problem)
    parts = [
        solver.view.catalog.class_parts(p, RelaxState(), None, solver.classes.class_parts)
        for p in (a, b, c, alone)
    ]
    assert parts[0] is parts[1]
    assert parts[2] is not parts[0] and parts[2][1] != parts[0][1]  # its own tolerations
    assert parts[3] is not parts[0] and parts[3][6] == parts[0][6]  # alone, equal constraints
