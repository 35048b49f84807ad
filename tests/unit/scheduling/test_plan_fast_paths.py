"""The `joinery plan` reading fast paths give what the slow paths give: the manifest loader's
memoised tag resolution against PyYAML's own, on the shapes users write and on the
side-by-side benchmark's real-catalog workload files."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

from benchmarks.catalogs import ec2_like_catalog
from benchmarks.side_by_side import deployments_of
from benchmarks.workloads import nodepool_manifest
from models.catalog import dump_catalog
from scheduling import lowerbound
from scheduling.inputs import Document, build_problem
from scheduling.lowerbound import _pareto_front, lower_bound
from scheduling.solver import Solver
from worker.plan_inputs import manifest_yaml

SCALARS = [
    "yes",
    "No",
    "on",
    "~",
    "null",
    "",
    "0o17",
    "017",
    "0x1F",
    "1_000",
    "1:30",
    "1e3",
    "1.5e3",
    ".inf",
    "-.NaN",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "=",
    "<<",
    "500m",
    "1Gi",
    "true",
    "TRUE",
    "+12",
    "-0",
    "app",
    "kubernetes.io/arch",
]


def test_memoised_resolution_is_pyyamls() -> None:
    loader = manifest_yaml.ManifestLoader("")
    assert loader.resolve is manifest_yaml.resolve_plain
    reference = yaml.SafeLoader("")
    calls: list[tuple[Any, ...]] = [
        (yaml.ScalarNode, value, implicit)
        for value in SCALARS
        for implicit in ((True, False), (False, True), (False, False), (True, True))
    ]
    calls += [(yaml.SequenceNode, None, True), (yaml.MappingNode, None, True)]
    for args in calls:
        assert loader.resolve(*args) == reference.resolve(*args), args


def test_scalars_read_as_pyyaml_reads_them() -> None:
    readable = [s for s in SCALARS if s not in ("=", "<<")]  # !!value, !!merge: both refuse
    text = "".join(f"p{i}: {s}\nq{i}: '{s}'\n" for i, s in enumerate(readable))
    text += "r:\n" + "".join(f"- {s}\n- '{s}'\n" for s in readable)
    assert repr(list(manifest_yaml.load_all(text))) == repr(list(yaml.safe_load_all(text)))


def test_real_catalog_workload_reads_as_pyyaml_reads_it() -> None:
    pods = deployments_of(600)
    cat = {"instanceTypes": dump_catalog(ec2_like_catalog())["instanceTypes"][::8]}
    dump = yaml.CSafeDumper
    texts = [yaml.dump_all(pods, Dumper=dump, sort_keys=False)]
    texts.append(yaml.dump(cat, Dumper=dump, sort_keys=False))
    for text in texts:
        assert list(manifest_yaml.load_all(text)) == list(yaml.load_all(text, yaml.CSafeLoader))


def _pairwise_front(ordered: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """The front as the lower bound first computed it: each vector against those kept."""
    front: list[tuple[float, float, float]] = []
    for r in ordered:
        if not any(f[0] <= r[0] and f[1] <= r[1] and f[2] <= r[2] for f in front):
            front.append(r)
    return front


def test_pareto_front_is_pairwise_pruning() -> None:
    rng = random.Random(12)
    for trial in range(400):
        size = rng.randrange(0, 60)
        # Few distinct values, so ties and duplicates in every coordinate are common.
        values = [rng.choice([0.0, 0.5, 1.0, 2.0, 3.0]) for _ in range(4)] + [rng.random()]
        vectors = sorted(tuple(rng.choice(values) for _ in range(3)) for _ in range(size))
        assert _pareto_front(vectors) == _pairwise_front(vectors), trial  # type: ignore[arg-type]


def test_lower_bound_is_the_pairwise_bound_on_the_real_catalog() -> None:
    """Float for float: the bound on the Deployments over the EC2-shaped catalog."""
    docs = [nodepool_manifest(), *deployments_of(400)]
    problem = build_problem(
        [Document(d, f"doc {i}") for i, d in enumerate(docs)], ec2_like_catalog()
    ).problem
    solver = Solver(problem)
    plan = solver.solve()
    fast = lower_bound(solver, plan.scheduled)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lowerbound, "_pareto_front", _pairwise_front)
        assert lower_bound(solver, plan.scheduled) == fast > 0
