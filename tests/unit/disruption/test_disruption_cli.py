"""``joinery plan --disruption`` through ``worker.cli.main``: the output object, the table,
determinism, and bad input as exit 2 with one line naming the document and field."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.catalogs import catalog
from tests.support.disruption import bound, claim_for, managed, pdb, pool
from worker.cli import main

NOW = "2026-11-23T12:00:00Z"


def _cluster() -> list[Mapping[str, Any]]:
    a, b, c = managed("a"), managed("b"), managed("c")
    return [
        pool(),
        a,
        claim_for(a),
        b,
        claim_for(b),
        c,
        claim_for(c),
        bound("web-0", "a", labels={"app": "web"}),
        bound("web-1", "b", labels={"app": "web"}),
    ]


def _write(tmp_path: Path, docs: Sequence[Any]) -> tuple[str, str]:
    m, cat = tmp_path / "cluster.yaml", tmp_path / "catalog.yaml"
    m.write_text(yaml.safe_dump_all(list(docs)))
    cat.write_text(yaml.safe_dump(catalog()))
    return str(m), str(cat)


def _run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    docs: Sequence[Any],
    *extra: str,
    output: str = "json",
) -> tuple[int, str, str]:
    m, cat = _write(tmp_path, docs)
    code = main(["plan", "-f", m, "--catalog", cat, "-o", output, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_plan_object_gains_a_disruption_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(tmp_path, capsys, _cluster(), "--disruption", "--now", NOW)
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"nodeClaims", "existingNodes", "unschedulable", "cost", "disruption"}
    d = doc["disruption"]
    assert set(d) == {"commands", "blocked", "kept", "costPerHour"}
    named = [n for c in d["commands"] for n in c["nodes"]] + [
        v["node"] for v in d["blocked"] + d["kept"]
    ]
    assert sorted(named) == ["a", "b", "c"]
    assert d["costPerHour"]["before"] == pytest.approx(3 * 0.192)
    assert "c" in [n for c in d["commands"] if c["reason"] == "Empty" for n in c["nodes"]]
    assert err == ""


def test_without_disruption_the_output_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(tmp_path, capsys, _cluster())
    assert code == 0
    assert "disruption" not in json.loads(out)


def test_same_input_same_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(tmp_path, capsys, _cluster(), "--disruption", "--now", NOW)
    second = _run(tmp_path, capsys, _cluster(), "--disruption", "--now", NOW)
    assert first == second


def test_table_and_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(tmp_path, capsys, _cluster(), "--disruption", "--now", NOW, output="table")
    assert code == 0
    assert "Disruption: " in out and "$0.5760/h ->" in out
    assert "Empty" in out
    code, out, _ = _run(tmp_path, capsys, _cluster(), "--disruption", "--now", NOW, output="yaml")
    assert code == 0
    assert "disruption" in yaml.safe_load(out)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--now", "yesterday"], "--now: not an RFC 3339 time: 'yesterday'"),
        (["--now", "2026-11-23T12:00:00"], "--now: '2026-11-23T12:00:00' names no time zone"),
    ],
)
def test_a_garbage_now_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = _run(tmp_path, capsys, _cluster(), "--disruption", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_now_needs_disruption(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(tmp_path, capsys, _cluster(), "--now", NOW)
    assert code == 2 and "--now is only used with --disruption" in err


def test_an_invalid_budget_schedule_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _cluster()
    docs[0] = pool(budgets=[{"nodes": "1", "schedule": "0 25 * * *", "duration": "1h"}])
    code, out, err = _run(tmp_path, capsys, docs, "--disruption", "--now", NOW)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "(NodePool default)" in err and "spec.disruption.budgets[0]" in err and "schedule" in err


def test_a_pdb_with_min_available_and_max_unavailable_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = pdb("web", {"app": "web"}, min_available=1, max_unavailable=1)
    code, out, err = _run(tmp_path, capsys, [*_cluster(), bad], "--disruption", "--now", NOW)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "(PodDisruptionBudget web)" in err and "mutually exclusive" in err


def test_a_bad_timestamp_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _cluster()
    docs[2] = claim_for(docs[1], last_pod_event="last tuesday")
    code, _, err = _run(tmp_path, capsys, docs, "--disruption", "--now", NOW)
    assert code == 2 and err.count("\n") == 1
    assert "status.lastPodEventTime: not an RFC 3339 time" in err


def test_inputs_from_files_or_a_cluster_not_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m, cat = _write(tmp_path, _cluster())
    assert main(["plan", "--catalog", cat]) == 2
    assert main(["plan", "-f", m, "--kubeconfig", m, "--catalog", cat]) == 2
    err = capsys.readouterr().err
    assert err.count("one of them") == 2


def test_the_command_as_users_run_it(tmp_path: Path) -> None:
    m, cat = _write(tmp_path, _cluster())
    joinery = Path(sys.executable).with_name("joinery")
    done = subprocess.run(
        [str(joinery), "plan", "-f", m, "--catalog", cat, "--disruption", "--now", NOW],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["disruption"]["costPerHour"]["before"] > 0


def test_the_readme_example(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[3]
    code = main(
        [
            "plan",
            "-f",
            str(root / "examples" / "cluster.yaml"),
            "--catalog",
            str(root / "examples" / "catalog.yaml"),
            "--disruption",
            "--now",
            NOW,
        ]
    )
    assert code == 0
    d = json.loads(capsys.readouterr().out)["disruption"]
    removed = {n: c["reason"] for c in d["commands"] for n in c["nodes"]}
    assert removed == {"node-d": "Empty", "node-b": "Underutilized"}
    assert d["blocked"] == [
        {"node": "node-c", "reason": 'pod shop/cache-0 has karpenter.sh/do-not-disrupt: "true"'}
    ]
