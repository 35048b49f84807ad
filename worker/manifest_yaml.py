"""Reading manifest and catalog YAML fast, with exactly PyYAML's safe semantics.

libyaml (PyYAML's C binding) parses, but PyYAML still resolves every scalar's tag and builds
every object in Python, which is most of the time on a file of thousands of Pods. This loader
keeps PyYAML's rules and only takes shorter paths: a tag resolved once per distinct scalar,
and plain mappings, sequences and the core scalar types built directly. Anything else (merge
keys ``<<``, explicit tags such as ``!!binary``, unknown tags) goes through PyYAML's own
constructor, so results and error messages are the same as ``yaml.safe_load_all``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_CORE_SCALARS = frozenset(
    ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool")
)
_NULL = "tag:yaml.org,2002:null"
_MISSING = object()


class ManifestLoader(_BASE):
    """PyYAML's safe loader (libyaml-backed when available) with faster resolution and
    construction; see the module docstring."""

    # Tag resolution is a pure function of (kind, value, implicit) for a given resolver table.
    _resolved: dict[tuple[Any, Any, Any], str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        key = (kind, value, implicit)
        tag = self._resolved.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._resolved) > 200_000:
                self._resolved.clear()
            self._resolved[key] = tag
        return tag

    def construct_document(self, node: Node) -> Any:
        self._built: dict[int, Any] = {}
        try:
            return self._build(node)
        finally:
            self._built = {}
            self.constructed_objects: dict[Any, Any] = {}
            self.recursive_objects: dict[Any, Any] = {}

    def _build(self, node: Node) -> Any:
        tag = node.tag
        if tag == _STR and type(node) is ScalarNode:
            return node.value
        if tag == _NULL and type(node) is ScalarNode:
            return None
        if tag in _CORE_SCALARS and type(node) is ScalarNode:
            return self.yaml_constructors[tag](self, node)
        got = self._built.get(id(node), _MISSING)
        if got is not _MISSING:
            return got
        if tag == _MAP and type(node) is MappingNode:
            if any(k.tag == _MERGE for k, _ in node.value):
                return self.construct_object(node, deep=True)
            out: dict[Any, Any] = {}
            self._built[id(node)] = out
            for key_node, value_node in node.value:
                key = self._build(key_node)
                try:
                    hash(key)
                except TypeError:
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        "found unhashable key",
                        key_node.start_mark,
                    ) from None
                out[key] = self._build(value_node)
            return out
        if tag == _SEQ and type(node) is SequenceNode:
            items: list[Any] = []
            self._built[id(node)] = items
            items.extend(self._build(child) for child in node.value)
            return items
        return self.construct_object(node, deep=True)


def load_all(text: str) -> Iterator[Any]:
    """The documents of ``text``, as ``yaml.safe_load_all`` would return them."""
    return yaml.load_all(text, Loader=ManifestLoader)
