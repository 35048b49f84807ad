"""`joinery plan`'s reading path gives what the plain path gives: the fast YAML loader against
PyYAML's safe loader (same documents, same errors) on generated text, and the collector pause
around reading leaves the collector as it found it."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worker.cli.plan_command import collection_paused
from worker.plan_inputs import manifest_yaml

# Plain scalars whose YAML 1.1 type depends on their spelling, next to ordinary words.
_WORDS = [
    "yes", "No", "on", "OFF", "~", "null", "Null", "true", "0x1F", "0o17", "017", "1_000",
    "1:20", "1.5e3", ".inf", "-.Inf", ".nan", "2001-12-14", "2001-12-14 21:59:43.10 -5",
    "<<", "=", "1Gi", "500m", "a b", "web", "", "-", "?", "0", "-0", "+1", "1e400",
]  # fmt: skip
_SCALARS = st.one_of(
    st.sampled_from(_WORDS),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6),
)
_TOKENS = st.sampled_from(
    [": ", "\n", "  ", "- ", "[", "]", "{", "}", ", ", "&a ", "*a", "!!str ", "!!int ",
     "!!binary ", "!foo ", "'", '"', "? ", "---\n", "...\n", "|\n  ", ">\n  ", "#c", "\t"]
)  # fmt: skip


def _document(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_SCALARS, inner, max_size=3),
    )


_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _SCALARS),
    _document,
    max_leaves=12,
)


_PLAIN: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the same parser, PyYAML's build


def _both(text: str) -> tuple[str, str]:
    """What each loader makes of ``text``: the documents' repr, or the error's text."""
    results = []
    for load in (
        lambda: list(manifest_yaml.load_all(text)),
        lambda: list(yaml.load_all(text, Loader=_PLAIN)),
    ):
        try:
            results.append(repr(load()))
        except yaml.YAMLError as exc:
            results.append(f"{type(exc).__name__}: {exc}")
        except RecursionError:
            results.append("RecursionError")
        except Exception as exc:  # PyYAML's own loader on a value its tag cannot read
            results.append(f"crash: {type(exc).__name__}")
    return results[0], results[1]


def _alike(fast: str, plain: str) -> bool:
    """Same documents or the same error; where PyYAML ends in a Python exception (``!!int ''``
    raises IndexError), the fast loader gives a YAML error instead (one line for the user)."""
    if plain.startswith("crash: "):
        return fast.startswith("ConstructorError: cannot read ")
    return fast == plain


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_VALUES, min_size=1, max_size=3),
    st.sampled_from([None, True, False]),
    st.booleans(),
)
def test_dumped_documents_load_alike(docs: list[Any], flow: bool | None, canonical: bool) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=flow, canonical=canonical)
    fast, plain = _both(text)
    assert _alike(fast, plain), (fast, plain)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_TOKENS, _SCALARS), max_size=25))
def test_damaged_text_loads_or_fails_alike(parts: list[str]) -> None:
    """Anchors, aliases, tags, merge keys and broken text: same result or same error."""
    fast, plain = _both("".join(parts))
    assert _alike(fast, plain), (fast, plain)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\nd: {<<: *x, e: 2}\n",
        "- &l [1, 2]\n- *l\n- {<<: [{a: 1}, {b: 2}]}\n",
        "? !!str 1\n: !!int '2'\n",
        "a: 1\n---\n? [1]\n: 2\n",
    ],
)
def test_merge_keys_aliases_and_tags(text: str) -> None:
    fast, plain = _both(text)
    assert fast == plain


@pytest.mark.parametrize("text", ["<<: ", "a: 1\n<<: ", "<<: ~\n", "a: {<<: 3}\n", "<<: [1]\n"])
def test_a_merge_key_without_mappings_fails_as_pyyaml(text: str) -> None:
    """PyYAML deletes the ``<<`` pair from the node before it fails; the second pass that
    names PyYAML's own error once read the damaged node as ``{}`` (found by hypothesis)."""
    fast, plain = _both(text)
    assert plain.startswith("ConstructorError: "), plain
    assert fast == plain


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: !!int \n", "cannot read '' as !!int"),
        ("a: [1, !!float abc]\n", "cannot read 'abc' as !!float"),
        ("a: !!timestamp x\n", "cannot read 'x' as !!timestamp"),
        ("b: &x {c: 1}\na: {<<: *x, d: !!int q}\n", "cannot read this !!map value"),
    ],
)
def test_a_value_its_tag_cannot_read_is_a_yaml_error(text: str, problem: str) -> None:
    """PyYAML's own loader raises IndexError/ValueError here: a traceback for the user."""
    with pytest.raises(yaml.YAMLError) as err:
        list(manifest_yaml.load_all(text))
    assert getattr(err.value, "problem", None) == problem


def test_aliases_stay_one_object() -> None:
    doc = next(iter(manifest_yaml.load_all("a: &x {b: [1]}\nc: *x\n")))
    assert doc["a"] is doc["c"]


def test_collection_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with collection_paused():
        assert not gc.isenabled()
        kept = [{"x": [i]} for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # an in-process caller is never frozen
    with collection_paused(freeze=True):
        kept = [{"x": [i]} for i in range(1000)]
    assert gc.get_freeze_count() >= frozen + len(kept)
    gc.unfreeze()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
        gc.unfreeze()


def _one_type_catalog(tmp_path: Path) -> Path:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        yaml.safe_dump(
            {
                "instanceTypes": [
                    {
                        "name": "m.large",
                        "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                        "offerings": [{"zone": "z1", "capacityType": "on-demand", "price": 0.1}],
                    }
                ]
            }
        )
    )
    return catalog


def test_plan_leaves_nothing_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process callers (the fuzz tier runs thousands of plans) are never frozen: objects
    given back by ``gc.unfreeze`` land in the oldest generation, where garbage piled up."""
    from worker.cli import main

    freezes: list[None] = []
    monkeypatch.setattr(gc, "freeze", lambda: freezes.append(None))
    catalog = _one_type_catalog(tmp_path)
    manifests = tmp_path / "m.yaml"
    manifests.write_text("kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {}\n")
    assert main(["plan", "-f", str(manifests), "--catalog", str(catalog)]) == 0
    assert freezes == []
    assert gc.isenabled()


def test_plan_does_not_import_croniter(tmp_path: Path) -> None:
    """A NodePool without a budget schedule needs no cron parser at start-up."""
    code = "import sys, worker.cli.plan_command; print('croniter' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert out.stdout.strip() == "False"


_POOL = (
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"
    "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass,"
    " name: default}, requirements: []}}}\n"
)


def test_duplicate_nodepool_names_the_document_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from worker.cli import main

    manifests = tmp_path / "m.yaml"
    manifests.write_text(_POOL + "---\n" + _POOL)
    assert main(["plan", "-f", str(manifests), "--catalog", str(_one_type_catalog(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"joinery plan: {manifests} document 2 (NodePool default): metadata.name: "
        "duplicate NodePool\n"
    )


def test_a_closed_pipe_is_no_traceback(tmp_path: Path) -> None:
    """`joinery plan ... | head`: the reader leaves early; the command ends quietly."""
    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\n"
        "spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"
        for i in range(5000)  # a plan larger than a pipe's buffer
    )
    manifests = tmp_path / "m.yaml"
    manifests.write_text(_POOL + pods)
    catalog = _one_type_catalog(tmp_path)
    joinery = Path(sys.executable).with_name("joinery")
    proc = subprocess.Popen(
        [str(joinery), "plan", "-f", str(manifests), "--catalog", str(catalog)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(1) == b"{"
    proc.stdout.close()  # the reader goes away with most of the plan unread
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert "Traceback" not in err


def test_disruption_json_is_the_standard_encoders_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--disruption -o json` is written by the plan's fast writer: the same bytes as
    ``json.dumps(doc, indent=2)``."""
    import json

    from worker.cli import main

    examples = Path(__file__).resolve().parents[3] / "examples"
    argv = ["plan", "--disruption", "--now", "2026-11-23T12:00:00Z"]
    argv += ["-f", str(examples / "cluster.yaml"), "--catalog", str(examples / "catalog.yaml")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["disruption"]["kept"] or doc["disruption"]["commands"]
    assert out == json.dumps(doc, indent=2) + "\n"
