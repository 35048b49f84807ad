"""The sectioned manifest reader reads every file exactly as ``yaml.safe_load_all`` does.

It cuts documents into pieces and parses each distinct piece once; these tests generate files
with repeated pieces in the styles people and tools write (block style, comments, block and
multi-line scalars, sequences at their key's column, empty documents) and damaged ones, and
compare documents and errors with PyYAML's own loader.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worker.plan_inputs import manifest_sections

_PLAIN: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_WORDS = [
    "yes", "No", "on", "~", "null", "true", "0x1F", "017", "1_000", "1:20", "1.5e3", ".inf",
    "2001-12-14", "2001-12-14 21:59:43.10 -5", "1Gi", "500m", "web", "", "-", "a b", "#x",
    "x #y", "- a", "a: b", "'q'", '"q"', "|", ">", "---", "...", "a\nb", "a\n\nb  ", " lead",
]  # fmt: skip
_SCALARS = st.one_of(
    st.sampled_from(_WORDS),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8),
)
_KEYS = st.one_of(
    st.sampled_from(["name", "spec", "metadata", "labels", "app", "yes", "on", "null", "a-b"]),
    _SCALARS,
)
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _SCALARS),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=16,
)
_DOCS = st.one_of(st.none(), st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4), _VALUES)


# Kubernetes-like documents: identifier keys, block style, so most files take the sectioned
# path (the generic ones above mostly go the whole-file way).
_IDENTS = st.from_regex(r"[a-z][a-zA-Z0-9./-]{0,8}", fullmatch=True)
_K8S_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _SCALARS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_IDENTS, inner, min_size=1, max_size=4)
    ),
    max_leaves=12,
)
_K8S_DOCS = st.dictionaries(
    st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status"]),
    _K8S_VALUES,
    min_size=1,
)


def _result(load: Any, text: str) -> str:
    try:
        return repr(list(load(text)))
    except yaml.YAMLError as exc:
        return f"{type(exc).__name__}: {exc}"
    except RecursionError:
        return "RecursionError"
    except Exception as exc:  # PyYAML's own loader on a value its tag cannot read
        return f"crash: {type(exc).__name__}"


def _same(text: str) -> None:
    plain = _result(lambda t: yaml.load_all(t, Loader=_PLAIN), text)
    sectioned = _result(manifest_sections.load_all, text)
    if plain.startswith("crash: "):
        assert sectioned.startswith("ConstructorError: cannot read "), (text, sectioned)
    else:
        assert sectioned == plain, text


def _with_comments(text: str, seed: int) -> str:
    """Comments and empty lines put between lines, at random indentations."""
    rng = random.Random(seed)
    out = []
    for line in text.splitlines(keepends=True):
        if rng.random() < 0.15:
            out.append(" " * rng.choice([0, 1, 2, 4]) + rng.choice(["# c\n", "\n", "#\n"]))
        out.append(line)
    return "".join(out)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_DOCS, min_size=1, max_size=4),
    st.integers(min_value=1, max_value=3),
    st.sampled_from([None, False, True]),
    st.sampled_from([None, "'", '"', "|", ">"]),
    st.sampled_from([None, 2, 4]),
    st.sampled_from([None, 8, 30]),
    st.booleans(),
    st.integers(min_value=-1, max_value=1000),
)
def test_generated_files_read_as_pyyaml(
    docs: list[Any],
    copies: int,
    flow: bool | None,
    style: str | None,
    indent: int | None,
    width: int | None,
    explicit_start: bool,
    comments: int,
) -> None:
    text = yaml.safe_dump_all(
        docs * copies,
        default_flow_style=flow,
        default_style=style,
        indent=indent,
        width=width,
        explicit_start=explicit_start,
        allow_unicode=True,
    )
    if comments >= 0:
        text = _with_comments(text, comments)
    _same(text)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_K8S_DOCS, min_size=1, max_size=5),
    st.lists(st.integers(0, 4), min_size=1, max_size=12),
    st.sampled_from([None, 2, 4]),
    st.integers(min_value=-1, max_value=1000),
)
def test_kubernetes_like_files_read_as_pyyaml(
    docs: list[Any], order: list[int], indent: int | None, comments: int
) -> None:
    chosen = [docs[i % len(docs)] for i in order]  # repeated documents share pieces
    text = yaml.safe_dump_all(chosen, default_flow_style=False, indent=indent, sort_keys=False)
    if comments >= 0:
        text = _with_comments(text, comments)
    _same(text)


_TOKENS = st.sampled_from(
    [": ", "\n", "  ", "    ", "- ", "---\n", "key: ", "spec:\n", "  name: ", "  labels:\n",
     "    app: ", "\n  - ", "'", '"', "[", "]", "{", "}", ", ", "|\n", "|+\n", ">-\n", "# c",
     "&a ", "*a", "!!str ", "<<: ", "? ", "yes: ", "...\n", "%YAML 1.1\n", "\t", "\r\n"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_TOKENS, _SCALARS), max_size=30), st.integers(1, 3))
def test_damaged_files_read_or_fail_as_pyyaml(parts: list[str], copies: int) -> None:
    _same("".join(parts) * copies)


@pytest.mark.parametrize(
    "text",
    [
        # a multi-line quoted scalar whose next line sits at a key's column
        "metadata:\n  note: 'a\n  b: c'\n  name: x\n---\nmetadata:\n  note: 'a\n  b: c'\n",
        'spec:\n  s: "x\ny: 1"\n',
        # a sequence at its key's column, at both levels
        "items:\n- a\n- b\nspec:\n  list:\n  - 1\n  - 2\n" * 1,
        # keep chomping at the end of a piece and of a document
        "a:\n  s: |+\n    x\n\n\n  t: 1\nb: |+\n  y\n\n---\na:\n  s: |+\n    x\n\n\n  t: 1\n",
        # comments left of a block, inside a literal scalar, at column 0
        "spec:\n  a: 1\n# c\n  b: 2\n  s: |\n    # not a comment\n    x\n",
        # keys that read as something other than strings, and duplicates
        "yes: 1\nspec:\n  on: 2\n  null: 3\nspec:\n  a: 4\n",
        "spec:\n  a: 1\n  a: 2\n---\nspec:\n  a: 1\n  a: 2\n",
        # empty documents, leading comments, a trailing separator
        "# head\n---\n---\na: 1\n---\n# only a comment\n---\n",
        # one document with an anchor among plain ones
        "a: &x {b: 1}\nc: *x\n---\nspec:\n  a: 1\n---\nspec:\n  a: 1\n",
        # repeated dates and sets of pieces (copied without marshal)
        "m:\n  t: 2001-12-14\n---\nm:\n  t: 2001-12-14\n",
        # a document that is not a mapping, and one that is a scalar
        "- a\n- b\n---\nspec:\n  a: 1\n",
        "spec:\n  a: 1\n---\njust words\n",
        # indentation of one space, and deeper blocks
        "spec:\n a: 1\n b:\n  c: 2\n---\nspec:\n a: 1\n",
        # errors: a bad document after good ones, a bad piece shared by two documents
        "spec:\n  a: 1\n---\nspec:\n  a: [1\n",
        "spec:\n  a: {\n---\nspec:\n  a: {\n",
        "no final newline: 1",
        # a control character YAML refuses, even in a comment (found by the damaged files)
        "#x\x1f\n",
        "spec:\n  a: 1 # \x7f\n",
        "spec:\n  a: caf\u00e9 \x0b\n",
    ],
)
def test_edge_cases_read_as_pyyaml(text: str) -> None:
    _same(text)


def test_documents_share_no_objects() -> None:
    text = "spec:\n  containers:\n  - name: a\n    args: [x]\n" * 1
    docs = list(manifest_sections.load_all(f"{text}---\n{text}---\n{text}"))
    assert docs[0] == docs[1] == docs[2]
    docs[0]["spec"]["containers"][0]["args"].append("y")
    assert docs[1]["spec"]["containers"][0]["args"] == ["x"]
    assert docs[1]["spec"] is not docs[2]["spec"]


def test_repeated_pieces_are_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reason for the module: 100 Pods of one shape parse one spec, not 100."""
    from worker.plan_inputs import manifest_yaml

    parsed: list[str] = []
    real = manifest_yaml.load_all

    def counting(text: str) -> Any:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(manifest_yaml, "load_all", counting)
    pods = "".join(
        f"---\nkind: Pod\nmetadata:\n  name: p{i}\n  namespace: default\n"
        "spec:\n  containers:\n  - name: app\n    resources:\n      requests:\n"
        "        cpu: '1'\n"
        for i in range(100)
    )
    docs = list(manifest_sections.load_all(pods))
    assert [d["metadata"]["name"] for d in docs] == [f"p{i}" for i in range(100)]
    assert len(parsed) == 1  # one document of all distinct pieces
    assert parsed[0].count("containers") == 1
