"""The quick shape test (``_compile``) passes a manifest exactly when the field-naming one
(``_mismatch``) finds nothing, so ``shape_error`` gives the same answer either way."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling.schemas import _CHECKS, _DEFAULT, _DEFAULT_CHECK, SHAPES, _mismatch, shape_error

_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(0, 2), st.sampled_from(["", "a"])
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "name", "key"]), inner, max_size=3),
    ),
    max_leaves=6,
)


def _like(shape: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped mostly like ``shape``, sometimes wrong anywhere (any value instead)."""
    if depth > 6:
        return _VALUES
    if isinstance(shape, dict):
        keys = sorted(shape)
        right: st.SearchStrategy[Any] = st.fixed_dictionaries(
            {}, optional={k: _like(shape[k], depth + 1) for k in keys} | {"extra": _VALUES}
        )
    elif hasattr(shape, "item"):
        right = st.lists(_like(shape.item, depth + 1), max_size=3)
    elif hasattr(shape, "value"):
        right = st.dictionaries(st.sampled_from(["k", "l"]), _like(shape.value, depth + 1))
    else:
        right = _LEAVES
    return st.one_of(right, right, right, _VALUES)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(SHAPES)), st.data())
def test_the_quick_check_agrees_with_the_field_naming_one(kind: str, data: st.DataObject) -> None:
    body = data.draw(_like(SHAPES[kind]).filter(lambda v: isinstance(v, dict)))
    assert _CHECKS[kind](body) == (_mismatch(body, SHAPES[kind], "") is None)
    assert _DEFAULT_CHECK(body) == (_mismatch(body, _DEFAULT, "") is None)
    named = shape_error({**body, "kind": kind})
    assert named == _mismatch({**body, "kind": kind}, SHAPES[kind], "")


def test_a_wrong_field_deep_in_a_pod_is_still_named() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": ["1"]}}}]},
    }
    assert (
        shape_error(pod)
        == "spec.containers[0].resources.requests.cpu: expected a quantity (string or number)"
    )
    assert (
        shape_error({**pod, "spec": {"containers": [None]}})
        == "spec.containers[0]: expected a mapping"
    )
    assert shape_error({**pod, "spec": {"nodeSelector": {"a": None}}}) is None
