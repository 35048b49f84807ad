"""No traceback on any input: `joinery plan` (and `--disruption`) on mutated manifests and
catalogs, in-process through ``worker.cli.main``, ends in exit 0 with a JSON plan or exit 2
with exactly one line on stderr. Over 10,000 generated inputs per run (the four tests below).

Every input that ever crashed is kept in tests/fuzz_corpus/ and replayed by
``test_corpus_replays``; to add one, save its manifests as ``<name>.yaml`` (and, when the
catalog was the broken part, ``<name>.catalog.yaml``; ``<name>.args`` holds extra flags).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fuzz_inputs import (
    CATALOG,
    CLUSTER,
    NOW,
    PROVISIONING,
    damaged_text,
    dump,
    mutate,
)
from worker.cli import main

CORPUS = Path(__file__).resolve().parents[2] / "fuzz_corpus"
EXAMPLES = int(
    os.environ.get("JOINERY_FUZZ_EXAMPLES", "2600")
)  # per test; four tests: over 10,000 inputs per run
DISRUPTION = ["--disruption", "--now", NOW]

_FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=False,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


class _Files:
    """One scratch directory for every example (examples run one after another)."""

    def __init__(self, root: Path) -> None:
        self.manifests = root / "manifests.yaml"
        self.catalog = root / "catalog.yaml"
        self.good_catalog = root / "good-catalog.yaml"
        self.good_catalog.write_text(yaml.safe_dump(CATALOG))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> _Files:
    return _Files(tmp_path_factory.mktemp("fuzz"))


def check_run(
    capsys: pytest.CaptureFixture[str], manifests: Path, catalog: Path, extra: list[str]
) -> None:
    """Run the command; a traceback fails the test, as does any other outcome than the two."""
    capsys.readouterr()
    code = main(["plan", "-f", str(manifests), "--catalog", str(catalog), *extra])
    out, err = capsys.readouterr()
    if code == 0:
        doc = json.loads(out)
        assert {"nodeClaims", "unschedulable", "cost"} <= set(doc)
        assert all(line.startswith("warning: ") for line in err.splitlines())
    else:
        assert code == 2, (code, err)
        assert out == ""
        assert err.endswith("\n") and err.count("\n") == 1, err
        assert err.startswith("joinery plan: ")


def _write(path: Path, data: Any) -> None:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8", errors="surrogatepass")


def _safe_dump(docs: Any) -> str | None:
    try:
        return dump(docs)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None  # not representable as YAML (e.g. a lone surrogate): nothing to feed


@settings(_FUZZ)
@given(docs=mutate(PROVISIONING), disruption=st.booleans())
def test_mutated_manifests(
    files: _Files, capsys: pytest.CaptureFixture[str], docs: Any, disruption: bool
) -> None:
    text = _safe_dump(docs)
    if text is None:
        return
    _write(files.manifests, text)
    check_run(capsys, files.manifests, files.good_catalog, DISRUPTION if disruption else [])


@settings(_FUZZ)
@given(docs=mutate(CLUSTER))
def test_mutated_clusters_with_disruption(
    files: _Files, capsys: pytest.CaptureFixture[str], docs: Any
) -> None:
    text = _safe_dump(docs)
    if text is None:
        return
    _write(files.manifests, text)
    check_run(capsys, files.manifests, files.good_catalog, DISRUPTION)


@settings(_FUZZ)
@given(cat=mutate(CATALOG), disruption=st.booleans())
def test_mutated_catalogs(
    files: _Files, capsys: pytest.CaptureFixture[str], cat: Any, disruption: bool
) -> None:
    text = _safe_dump([cat])
    if text is None:
        return
    _write(files.manifests, dump(CLUSTER if disruption else PROVISIONING))
    _write(files.catalog, text)
    check_run(capsys, files.manifests, files.catalog, DISRUPTION if disruption else [])


@settings(_FUZZ)
@given(
    data=st.one_of(damaged_text(dump(PROVISIONING)), damaged_text(yaml.safe_dump(CATALOG))),
    which=st.sampled_from(["manifests", "catalog"]),
    disruption=st.booleans(),
)
def test_damaged_text(
    files: _Files, capsys: pytest.CaptureFixture[str], data: bytes, which: str, disruption: bool
) -> None:
    manifests, catalog = files.manifests, files.good_catalog
    if which == "catalog":
        catalog = files.catalog
        _write(files.manifests, dump(CLUSTER if disruption else PROVISIONING))
    _write(manifests if which == "manifests" else catalog, data)
    check_run(capsys, manifests, catalog, DISRUPTION if disruption else [])


def _corpus() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*.yaml") if not p.name.endswith(".catalog.yaml"))


@pytest.mark.parametrize("case", _corpus(), ids=lambda p: p.stem)
def test_corpus_replays(files: _Files, capsys: pytest.CaptureFixture[str], case: Path) -> None:
    catalog = case.with_name(f"{case.stem}.catalog.yaml")
    args = case.with_name(f"{case.stem}.args")
    extra = args.read_text().split() if args.exists() else []
    check_run(capsys, case, catalog if catalog.exists() else files.good_catalog, extra)
