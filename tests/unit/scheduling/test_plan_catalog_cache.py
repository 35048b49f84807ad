"""`joinery plan --catalog`: a catalog read back from the cache of decoded catalog files is the
catalog a fresh parse gives, byte for byte in the plan, and a changed file is parsed anew."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from models.catalog import dump_catalog
from tests.support.catalogs import catalog
from tests.support.manifests import nodepool, pod
from worker.cli import main
from worker.cli.plan_command import load_instance_types
from worker.plan_inputs import catalog_file_cache, manifest_yaml
from worker.usage import UsageError


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of its own, storing files of any size (the test catalogs are small)."""
    where = tmp_path / "cache"
    monkeypatch.setenv("JOINERY_CACHE_DIR", str(where))
    monkeypatch.setattr(catalog_file_cache, "MIN_BYTES", 0)
    return where


def _no_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> Any:
        raise AssertionError("the catalog was parsed again")

    monkeypatch.setattr(manifest_yaml, "load_all", refuse)


def _write(tmp_path: Path, doc: Any, name: str = "catalog.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_cached_catalog_is_the_parsed_catalog(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, catalog())
    parsed = dump_catalog(load_instance_types(str(path)))
    assert len(list(cache.glob("*.json"))) == 1
    with monkeypatch.context() as m:
        _no_yaml(m)
        cached = dump_catalog(load_instance_types(str(path)))
    assert cached == parsed
    monkeypatch.setenv("JOINERY_CACHE_DIR", "")
    assert dump_catalog(load_instance_types(str(path))) == parsed


def test_plan_from_cached_catalog_is_byte_identical(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = _write(tmp_path, catalog())
    manifests = tmp_path / "m.yaml"
    manifests.write_text(
        yaml.safe_dump_all([nodepool(), pod("a", "1", "1Gi"), pod("b", "3", "7Gi")])
    )
    argv = ["plan", "-f", str(manifests), "--catalog", str(cat)]
    monkeypatch.setenv("JOINERY_CACHE_DIR", "")
    assert main(argv) == 0
    fresh = capsys.readouterr().out
    monkeypatch.setenv("JOINERY_CACHE_DIR", str(cache))
    assert main(argv) == 0 and capsys.readouterr().out == fresh
    _no_yaml(monkeypatch)
    monkeypatch.setattr(manifest_yaml, "load_all", yaml.safe_load_all)  # manifests only
    assert main(argv) == 0 and capsys.readouterr().out == fresh


def test_changed_file_is_parsed_again(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = catalog()
    path = _write(tmp_path, doc)
    before = load_instance_types(str(path))
    doc["instanceTypes"][0]["offerings"][0]["price"] = 123.5
    _write(tmp_path, doc)
    after = load_instance_types(str(path))
    assert after[0].offerings[0].price == 123.5 != before[0].offerings[0].price
    assert len(list(cache.glob("*.json"))) == 2


def test_a_new_loader_is_a_new_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"instanceTypes: []\n"
    first = catalog_file_cache.entry_name(data)
    monkeypatch.setattr(catalog_file_cache, "_loader_source", lambda: b"another loader")
    assert catalog_file_cache.entry_name(data) != first
    monkeypatch.setattr(yaml, "__version__", "0.0")
    assert len({first, catalog_file_cache.entry_name(data)}) == 2


def test_errors_read_the_same_from_the_cache(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = catalog()
    doc["instanceTypes"][1]["capacity"]["cpu"] = "lots"
    path = _write(tmp_path, doc)
    messages = []
    for _ in range(2):
        with pytest.raises(UsageError) as err:
            load_instance_types(str(path))
        messages.append(str(err.value))
        _no_yaml(monkeypatch)
    assert messages[0] == messages[1] and "instanceTypes[1].capacity" in messages[0]


def test_malformed_yaml_is_never_stored(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("instanceTypes: [\n")
    for _ in range(2):
        with pytest.raises(UsageError, match="malformed YAML"):
            load_instance_types(str(path))
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_what_json_would_change_is_parsed_every_time(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc: dict[str, Any] = {"generated": datetime.date(2026, 1, 2), **catalog()}
    path = _write(tmp_path, doc)
    load_instance_types(str(path))
    assert not list(cache.glob("*.json"))
    faithful = catalog_file_cache.json_faithful
    assert faithful([{"a": [1, 2.5, True, None, "x"], "b": [1, 2.5, True, None, "x"]}])
    shared: list[Any] = ["x"]
    looped: list[Any] = []
    looped.append(looped)
    for unfaithful in (
        {1: "a"},
        {"a": float("nan")},
        [float("inf")],
        ("a",),
        b"x",
        {True: 1},
        {"a": shared, "b": shared},
        looped,
    ):
        assert not faithful([unfaithful])


def test_a_catalog_that_contains_itself_is_refused_not_stored(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("instanceTypes: &t [*t]\n")
    with pytest.raises(UsageError):
        load_instance_types(str(path))
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_corrupt_entry_falls_back_to_parsing(tmp_path: Path, cache: Path) -> None:
    path = _write(tmp_path, catalog())
    parsed = dump_catalog(load_instance_types(str(path)))
    (entry,) = cache.glob("*.json")
    junks = ["{not json", "", "[]", json.dumps({"entry": "another", "documents": []})]
    junks.append(json.dumps({"entry": entry.name, "documents": "x"}))
    for junk in junks:
        entry.write_text(junk)
        assert dump_catalog(load_instance_types(str(path))) == parsed


def test_off_and_small_files_store_nothing(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, catalog())
    monkeypatch.setenv("JOINERY_CACHE_DIR", "")
    load_instance_types(str(path))
    monkeypatch.setenv("JOINERY_CACHE_DIR", str(cache))
    monkeypatch.setattr(catalog_file_cache, "MIN_BYTES", path.stat().st_size + 1)
    load_instance_types(str(path))
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_only_the_most_recent_entries_are_kept(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog_file_cache, "KEEP", 3)
    doc = catalog()
    for i in range(5):
        doc["instanceTypes"][0]["offerings"][0]["price"] = float(i + 1)
        load_instance_types(str(_write(tmp_path, doc)))
    assert len(list(cache.glob("*.json"))) == 3
    _no_yaml(monkeypatch)
    assert load_instance_types(str(_write(tmp_path, doc)))[0].offerings[0].price == 5.0
