"""The shape check (``scheduling.schemas``) names the same field as its plain recursive
definition, on manifests broken in every way the fuzz strategies know: it checks leaves and
unset fields inline for speed, and must not change a single message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling.schemas import _DEFAULT, _KIND_OF, INT, SHAPES, ListOf, MapOf, shape_error
from tests.support.fuzz_inputs import CLUSTER, PROVISIONING, mutate


def _reference(value: Any, shape: Any, path: str) -> str | None:
    """The definition: every field, leaf or not, through one recursive call."""
    if value is None:
        return None
    if isinstance(shape, dict):
        if not isinstance(value, Mapping):
            return f"{path}: expected a mapping"
        for key, sub in shape.items():
            err = _reference(value.get(key), sub, f"{path}.{key}" if path else key)
            if err:
                return err
        return None
    if isinstance(shape, ListOf):
        if not isinstance(value, list):
            return f"{path}: expected a list"
        for i, item in enumerate(value):
            if item is None and isinstance(shape.item, dict):
                return f"{path}[{i}]: expected a mapping"
            err = _reference(item, shape.item, f"{path}[{i}]")
            if err:
                return err
        return None
    if isinstance(shape, MapOf):
        if not isinstance(value, Mapping):
            return f"{path}: expected a mapping"
        for key, item in value.items():
            err = _reference(item, shape.value, f"{path}.{key}")
            if err:
                return err
        return None
    ok = (
        isinstance(value, int) and not isinstance(value, bool)
        if shape == INT
        else isinstance(value, str | int | float)
    )
    return None if ok else f"{path}: expected {_KIND_OF[shape]}"


def _reference_error(body: Mapping[str, Any]) -> str | None:
    kind = body.get("kind")
    if kind is not None and not isinstance(kind, str):
        return "kind: expected a string"
    api = body.get("apiVersion")
    if api is not None and not isinstance(api, str):
        return "apiVersion: expected a string"
    return _reference(body, SHAPES.get(kind or "", _DEFAULT), "")


_DOCS = [d for d in PROVISIONING + CLUSTER if isinstance(d, dict)]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_DOCS).flatmap(mutate))
def test_same_message_as_the_definition(doc: Any) -> None:
    if isinstance(doc, dict):
        assert shape_error(doc) == _reference_error(doc)


def test_valid_documents_pass() -> None:
    for doc in _DOCS:
        assert shape_error(doc) is None
