"""The `joinery plan` reading fast paths give what the slow paths give: the manifest loader's
memoised tag resolution against PyYAML's own, on the shapes users write and on the
side-by-side benchmark's real-catalog workload files."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from models.catalog import dump_catalog

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.catalogs import ec2_like_catalog  # noqa: E402
from benchmarks.side_by_side import deployments_of  # noqa: E402
from worker import manifest_yaml  # noqa: E402

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
    assert loader.resolve is manifest_yaml._resolve_cached
    reference = yaml.SafeLoader("")
    calls = [
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
