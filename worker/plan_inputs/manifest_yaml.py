"""Reading manifest and catalog YAML fast, with exactly PyYAML's safe semantics.

libyaml (PyYAML's C binding) parses, but PyYAML still resolves every scalar's tag and builds
every object in Python, which is most of the time on a file of thousands of Pods. This loader
keeps PyYAML's rules and only takes shorter paths: a tag resolved once per distinct scalar,
and plain mappings, sequences and the core scalar types built directly. Anything else (merge
keys ``<<``, explicit tags such as ``!!binary``, unknown tags) goes through PyYAML's own
constructor, so results and error messages are the same as ``yaml.safe_load_all``.
"""

from __future__ import annotations

import copy
import functools
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
_NO_PATHS: dict[Any, Any] = {}
_NOTHING = type(None)  # called with no arguments, returns None
# PyYAML's tag resolution (its Resolver's implicit rules, no path resolvers), memoised; also
# used to tell whether a plain key reads as a string (manifest_sections).
resolve_plain = functools.lru_cache(maxsize=100_000)(yaml.resolver.Resolver().resolve)
# What PyYAML's constructors raise, instead of a YAML error, on a value its tag cannot read.
_UNREADABLE = (ValueError, IndexError, TypeError, AttributeError, KeyError, OverflowError)


def _unreadable(node: Node) -> ConstructorError:
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    if isinstance(node, ScalarNode):
        value = node.value if len(node.value) <= 40 else node.value[:40] + "..."
        problem = f"cannot read {value!r} as {tag}"
    else:
        problem = f"cannot read this {tag} value"
    return ConstructorError(None, None, problem, node.start_mark)


class ManifestLoader(_BASE):
    """PyYAML's safe loader (libyaml-backed when available) with faster resolution and
    construction; see the module docstring."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        if not self.yaml_path_resolvers:
            # Without path resolvers (none are registered for the safe loader) the composer's
            # two calls per node only return; C-level callables make them nearly free.
            self.descend_resolver = _NO_PATHS.get
            self.ascend_resolver = _NOTHING
            if self.yaml_implicit_resolvers is yaml.resolver.Resolver.yaml_implicit_resolvers:
                # The composer resolves every scalar's tag; with PyYAML's own rules that is a
                # pure function of its arguments, memoised here in C (the composer calls it
                # ~300,000 times for 5,000 Pods, over a few thousand distinct values).
                self.resolve = resolve_plain

    def construct_document(self, node: Node) -> Any:
        self._built: dict[int, Any] = {}
        try:
            return self._build(node)
        except ConstructorError as first:
            # PyYAML builds a document breadth first and this loader depth first, so of two
            # errors in one document each would name another: PyYAML's own pass names its own
            # (or, where PyYAML would end in a Python exception, this loader's error stands).
            self._forget()
            try:
                return super().construct_document(node)
            except _UNREADABLE:
                raise first from None
        finally:
            self._forget()

    def _forget(self) -> None:
        self._built = {}
        self.constructed_objects: dict[Any, Any] = {}
        self.recursive_objects: dict[Any, Any] = {}
        self.state_generators: list[Any] = []

    def _build(self, node: Node) -> Any:
        tag = node.tag
        if type(node) is ScalarNode:
            if tag == _STR:
                return node.value
            if tag == _NULL:
                return None
            if tag in _CORE_SCALARS:
                try:
                    return self.yaml_constructors[tag](self, node)
                except _UNREADABLE:
                    raise _unreadable(node) from None
        got = self._built.get(id(node), _MISSING)
        if got is not _MISSING:
            return got
        if tag == _MAP and type(node) is MappingNode:
            pairs = node.value
            for key_node, _ in pairs:
                if key_node.tag == _MERGE:
                    return self._construct(node)
            out: dict[Any, Any] = {}
            self._built[id(node)] = out
            for key_node, value_node in pairs:
                # Most keys and many values are plain strings: taken here without a call.
                if key_node.tag == _STR and type(key_node) is ScalarNode:
                    key = key_node.value
                else:
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
                if value_node.tag == _STR and type(value_node) is ScalarNode:
                    out[key] = value_node.value
                else:
                    out[key] = self._build(value_node)
            return out
        if tag == _SEQ and type(node) is SequenceNode:
            items: list[Any] = []
            self._built[id(node)] = items
            items.extend([self._build(child) for child in node.value])
            return items
        return self._construct(node)

    def _construct(self, node: Node) -> Any:
        """PyYAML's own construction (merge keys, explicit tags), its Python exceptions on a
        value its tag cannot read (``!!int ''``, ``!!timestamp x``) turned into a YAML error.

        PyYAML builds a copy of the node: its merge-key handling deletes the ``<<`` pairs from
        the node it reads, even when it then fails, and the document must stay intact for the
        second, breadth-first pass that names PyYAML's own error (``<<:`` with no mapping was
        read as ``{}`` there)."""
        try:
            return self.construct_object(copy.deepcopy(node), deep=True)
        except _UNREADABLE:
            raise _unreadable(node) from None


def uses_libyaml() -> bool:
    """Whether the C parser is in use (the pure-Python one gives the same documents, slower)."""
    return _BASE is not yaml.SafeLoader


def load_all(text: str) -> Iterator[Any]:
    """The documents of ``text``, as ``yaml.safe_load_all`` would return them."""
    return yaml.load_all(text, Loader=ManifestLoader)
