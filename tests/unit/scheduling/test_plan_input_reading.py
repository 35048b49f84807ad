"""Reading `joinery plan` inputs: encodings, JSON, the fast YAML loader, quantity bounds,
the lower bound's memoised rates, and which modules the command imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from models.catalog import load_catalog
from models.quantity import MAX_MILLI, QuantityError, parse_quantity
from scheduling.inputs import Document, build_problem
from scheduling.lowerbound import _RateTable
from scheduling.solver import RelaxState, Solver
from tests.support.catalogs import catalog
from tests.support.manifests import nodepool, pod
from worker.cli import main
from worker.plan_inputs import manifest_yaml


def _plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifests: Path, cat: Path
) -> tuple[int, str, str]:
    code = main(["plan", "-f", str(manifests), "--catalog", str(cat)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def cat_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(catalog()))
    return path


DOCS = [nodepool(), pod("a", "1", "1Gi"), pod("b", "500m", "256Mi")]


def test_binary_manifest_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cat_yaml: Path
) -> None:
    bad = tmp_path / "m.yaml"
    bad.write_bytes(b"\xff\xfe\x00kind: Pod\n\x80\x81")
    code, out, err = _plan(tmp_path, capsys, bad, cat_yaml)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "not UTF-8" in err and "m.yaml" in err


@pytest.mark.parametrize("cpu", ["1e400", "1e99999999", "9223372036854776Ki", ".inf"])
def test_huge_quantity_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cat_yaml: Path, cpu: str
) -> None:
    text = yaml.safe_dump_all([nodepool(), pod("a", "1", "1Gi")]).replace("cpu: '1'", f"cpu: {cpu}")
    assert cpu in text
    manifests = tmp_path / "m.yaml"
    manifests.write_text(text)
    code, out, err = _plan(tmp_path, capsys, manifests, cat_yaml)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "cpu" in err and "Pod a" in err


def test_quantity_bounds() -> None:
    assert parse_quantity("1e-400") == 1  # finer than a milli-unit rounds up, as Kubernetes does
    assert parse_quantity("0e999999999") == 0
    assert parse_quantity("9223372036854775807m") == MAX_MILLI
    assert parse_quantity("2e3") == 2_000_000
    for bad in ("1e400", "9223372036854775808m", "-1e-400", float("nan"), float("inf"), 10**30):
        with pytest.raises(QuantityError):
            parse_quantity(bad)


def test_json_input_plans_like_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cat_yaml: Path
) -> None:
    as_yaml = tmp_path / "m.yaml"
    as_yaml.write_text(yaml.safe_dump_all(DOCS))
    as_json = tmp_path / "m.json"
    as_json.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": DOCS}))
    cat_json = tmp_path / "catalog.json"
    cat_json.write_text(json.dumps(catalog()))
    code_y, out_y, _ = _plan(tmp_path, capsys, as_yaml, cat_yaml)
    code_j, out_j, _ = _plan(tmp_path, capsys, as_json, cat_json)
    assert code_y == code_j == 0
    assert json.loads(out_y) == json.loads(out_j)
    assert json.loads(out_j)["nodeClaims"]


def test_json_with_nan_is_read_as_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cat_yaml: Path
) -> None:
    """``NaN`` is not JSON; YAML reads it as the string "NaN", so the pod is named that."""
    manifests = tmp_path / "m.json"
    body = {"kind": "List", "items": [nodepool(), pod("placeholder", "1", "1Gi")]}
    manifests.write_text(json.dumps(body).replace('"placeholder"', "NaN"))
    code, out, _ = _plan(tmp_path, capsys, manifests, cat_yaml)
    assert code == 0
    assert json.loads(out)["nodeClaims"][0]["pods"] == ["default/NaN"]


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1, c: [1, 2.5, true, null, ~, 0x1f, 1e3, .inf, 2001-12-14, 'yes', yes]}\n"
        "d: *x\n",
        "base: &b {cpu: 1}\nmerged:\n  <<: *b\n  memory: 2\n",
        "a: !!binary aGVsbG8=\nb: !!str 12\nc: !!int '7'\n",
        "a: &a [*a]\n",
        "---\n- 1\n---\n{x: y}\n---\n",
    ],
)
def test_fast_loader_builds_what_pyyaml_builds(text: str) -> None:
    fast = list(manifest_yaml.load_all(text))
    plain = list(yaml.load_all(text, Loader=yaml.SafeLoader))
    assert repr(fast) == repr(plain)


@pytest.mark.parametrize("text", ["? [1, 2]\n: 3\n", "a: !foo 1\n", "a: [1\n", "a: *nope\n"])
def test_fast_loader_refuses_what_pyyaml_refuses(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        list(yaml.load_all(text, Loader=yaml.SafeLoader))
    with pytest.raises(yaml.YAMLError):
        list(manifest_yaml.load_all(text))


def test_rate_fronts_match_pairwise_pruning() -> None:
    """The sorted Pareto front keeps exactly the rate vectors no other usable one dominates."""
    docs = [
        nodepool(),
        *(
            pod(f"p{i}", cpu, mem)
            for i, (cpu, mem) in enumerate(
                [("100m", "64Mi"), ("1", "1Gi"), ("3", "30Gi"), ("7", "2Gi"), ("250m", "12Gi")]
            )
        ),
    ]
    parsed = build_problem(
        [Document(d, f"doc {i}") for i, d in enumerate(docs)], load_catalog(catalog())
    )
    solver = Solver(parsed.problem)
    table = _RateTable(solver)
    for p in parsed.problem.pending:
        cls = solver.classes.pod_class(p, RelaxState())
        every = set()
        for _overhead, cands in table._pool_candidates(cls):
            need = [a + b for a, b in zip(_overhead, cls.vec, strict=True)]
            every |= {
                r for alloc, r in cands if all(x <= y for x, y in zip(need, alloc, strict=True))
            }
        naive = {
            r
            for r in every
            if not any(o != r and all(o[i] <= r[i] for i in range(3)) for o in every)
        }
        assert set(table.rates(cls)) == naive
        assert naive


def test_plan_imports_no_worker_clients(tmp_path: Path, cat_yaml: Path) -> None:
    manifests = tmp_path / "m.yaml"
    manifests.write_text(yaml.safe_dump_all(DOCS))
    code = (
        "import sys\n"
        "from worker.cli import main\n"
        f"rc = main(['plan', '-f', {str(manifests)!r}, '--catalog', {str(cat_yaml)!r}])\n"
        "heavy = sorted(m for m in ('temporalio', 'kubernetes', 'boto3', 'opentelemetry',"
        " 'worker.cli.worker_command', 'worker.cli.dev_command') if m in sys.modules)\n"
        "print(rc, heavy, file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert out.stderr.strip().splitlines()[-1] == "0 []"
