"""``dumps_indented`` writes exactly what ``json.dumps(doc, indent=2)`` writes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from worker.cli.plan_json import dumps_indented

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.lists(st.text(max_size=4), max_size=6)
        | st.dictionaries(st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=400)
@given(_JSON)
def test_same_text_as_the_standard_encoder(doc: Any) -> None:
    assert dumps_indented(doc) == json.dumps(doc, indent=2)


def test_repeated_name_lists_at_other_depths_keep_their_own_indent() -> None:
    names = ["m5.large", "c5.large", "ünïcode"]
    doc = {"a": names, "b": [{"c": list(names)}], "d": [names, names], "e": []}
    assert dumps_indented(doc) == json.dumps(doc, indent=2)


@given(
    st.dictionaries(
        st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False),
        st.integers(),
        min_size=1,
        max_size=3,
    )
)
def test_keys_that_are_not_strings_are_left_to_the_standard_encoder(doc: Any) -> None:
    assert dumps_indented({"x": doc}) == json.dumps({"x": doc}, indent=2)


def test_an_unsupported_value_raises_as_the_standard_encoder_does() -> None:
    try:
        json.dumps({"x": {1, 2}}, indent=2)
    except TypeError as expected:
        message = str(expected)
    try:
        dumps_indented({"x": {1, 2}})
    except TypeError as got:
        assert str(got) == message
    else:
        raise AssertionError("no TypeError")
