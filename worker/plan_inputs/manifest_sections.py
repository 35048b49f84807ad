"""Reading a file of many similar manifests: each distinct piece of text parsed once.

A file of Pods from Deployments repeats itself: 5,000 Pods of 50 Deployments differ in their
names and little else, and parsing the same ``spec`` block 100 times was the largest part of
``joinery plan`` on such a file (docs/performance.md). This reader cuts every document into its
top-level entries (``kind: Pod``, ``metadata:`` with its block, ``spec:`` ...) and a block
mapping one level further (``name: web-1``, ``labels:`` with its block ...), parses every
distinct piece once (all of a file's new pieces in one YAML document, so libyaml is entered
once), and gives each further occurrence a fresh copy of what the first gave (``marshal``, at
C speed: documents share no objects, as with PyYAML).

Only text where the cuts cannot change the meaning takes this path: every piece starts with a
plain key at its block's indentation, and a document with anchors, aliases, tags or merge keys
is parsed whole. A file with directives, ``...`` markers, tabs, carriage returns or a byte
order mark, or any piece the parser refuses or reads as other than one entry with its own key,
goes through ``manifest_yaml.load_all`` as a whole: the same documents and the same error
messages as ``yaml.safe_load_all``, which tests compare on generated files.
"""

from __future__ import annotations

import copy
import functools
import marshal
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import ScalarNode

from worker.plan_inputs import manifest_yaml

_SEPARATOR = re.compile(r"^---\n", re.MULTILINE)
# Where a top-level entry starts: a line beginning with neither indentation, a comment, an
# empty line nor a sequence's dash (a top-level key's sequence may sit at its key's column).
_TOP = re.compile(r"^(?=[^ #\n-])", re.MULTILINE)
# Text with no content: empty lines and comments.
_NOTHING = re.compile(r"(?: *(?:#[^\n]*)?\n)*")
# A plain key at the start of a line (after its indentation), with its value after ": " or on
# the following lines.
_KEY_LINE = re.compile(r"( *)([A-Za-z_][A-Za-z0-9_./-]*):(?: |\n)")
# The indentation of a block's first entry, past empty lines and comments.
_FIRST_KEY = re.compile(r"(?: *(?:#[^\n]*)?\n)*( +)[A-Za-z_]")
_STR = "tag:yaml.org,2002:str"


class _Refused(Exception):
    """This text does not take the sectioned path (the whole file is read as before)."""


@dataclass(frozen=True)
class _Split:
    """A top-level ``key:`` whose value is a block mapping, cut into its own entries."""

    key: str
    pieces: list[str]


# A document's entries: pieces (the text of one-entry mappings) and splits.
_Entry = str | _Split


def load_all(text: str) -> Iterator[Any]:
    """The documents of ``text`` as ``yaml.safe_load_all`` returns them."""
    try:
        return iter(_Reader().read(text))
    except _Refused:
        return manifest_yaml.load_all(text)


@functools.cache
def _plain_key(text: str) -> bool:
    """Whether ``text`` as a plain scalar is a string (not ``yes``, ``null``, ``on`` ...)."""
    return manifest_yaml.resolve_plain(ScalarNode, text, (True, False)) == _STR


@functools.cache
def _left_of(indent: int) -> re.Pattern[str]:
    """A line with content that starts left of ``indent``."""
    return re.compile(rf"^(?! {{{indent}}}|\n|\Z)", re.MULTILINE)


@functools.cache
def _entries_at(indent: int) -> re.Pattern[str]:
    """Where an entry of a block mapping at ``indent`` starts."""
    return re.compile(rf"^(?= {{{indent}}}[^ #\n-])", re.MULTILINE)


# Characters YAML's reader refuses anywhere in a stream, comments included (PyYAML's
# ``Reader.NON_PRINTABLE``); for ASCII text, the C0 controls but tab, line feed and carriage
# return, and DEL, deleted by one ``str.translate`` (a regular expression took 7 times longer).
_NON_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
_ASCII_CONTROLS = str.maketrans(
    "", "", "".join(chr(c) for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F))
)


def _non_printable(text: str) -> bool:
    if text.isascii():
        return len(text.translate(_ASCII_CONTROLS)) != len(text)
    return _NON_PRINTABLE.search(text) is not None


def _file_unsafe(text: str) -> bool:
    """Tabs, carriage returns and a byte order mark change how lines and indentation read;
    directives, document end markers and text after ``---`` change how documents are cut;
    a character YAML refuses (a control character, even in a comment) must fail the file as
    PyYAML fails it. (Substring tests: a regular expression over the file took longer than
    the parse.)"""
    if not text.endswith("\n") or "\t" in text or "\r" in text or "\ufeff" in text:
        return True
    if _non_printable(text):
        return True
    lines = "\n" + text
    return "\n%" in lines or "\n..." in lines or lines.count("\n---") != lines.count("\n---\n")


def _nothing(text: str) -> bool:
    return _NOTHING.fullmatch(text) is not None


def _unsafe(text: str) -> bool:
    """Anchors, aliases, tags or merge keys, which tie the pieces of a document together."""
    return "&" in text or "*" in text or "!" in text or "<<" in text


class _Reader:
    def __init__(self) -> None:
        self._uses: dict[str, int] = {}  # distinct pieces, first seen first, and their uses
        self._sections: dict[str, _Entry] = {}

    def read(self, text: str) -> list[Any]:
        if _file_unsafe(text):
            raise _Refused
        checked = _unsafe(text)
        plans: list[list[_Entry] | None] = []
        whole: dict[int, Any] = {}
        for i, chunk in enumerate(_SEPARATOR.split(text)):
            parts = _TOP.split(chunk)
            if not _nothing(parts[0]):
                raise _Refused  # content before the first key: not a block mapping
            if len(parts) == 1:
                if i > 0:
                    plans.append(None)  # an empty document after a separator
                continue  # only comments before the first separator: no document
            if checked and _unsafe(chunk):
                whole[len(plans)] = _parse_whole(chunk)
                plans.append([])
                continue
            plans.append([self._section(part) for part in parts[1:]])
        values = self._parse_pieces()
        return self._assemble(plans, whole, values)

    # -- cutting ---------------------------------------------------------------------------
    def _section(self, text: str) -> _Entry:
        """A top-level entry, cut one level further when its value is a block mapping."""
        entry = self._sections.get(text)
        if entry is None:
            head = _KEY_LINE.match(text)
            if head is None or not _plain_key(head.group(2)):
                raise _Refused
            split = self._split(text, head) if head.group(0).endswith(":\n") else None
            entry = text if split is None else split
            self._sections[text] = entry
        uses = self._uses
        if isinstance(entry, _Split):
            for piece in entry.pieces:
                uses[piece] = uses.get(piece, 0) + 1
        else:
            uses[entry] = uses.get(entry, 0) + 1
        return entry

    def _split(self, text: str, head: re.Match[str]) -> _Split | None:
        body = text[head.end() :]
        first = _FIRST_KEY.match(body)
        if first is None:
            return None
        indent = len(first.group(1))
        if _left_of(indent).search(body) is not None:
            return None  # a comment or a value left of the block: read the entry whole
        parts = _entries_at(indent).split(body)
        for part in parts[1:]:
            match = _KEY_LINE.match(part)
            if match is None or not _plain_key(match.group(2)):
                return None
        return _Split(head.group(2), parts[1:])

    # -- parsing ---------------------------------------------------------------------------
    def _parse_pieces(self) -> dict[str, Any]:
        """Every distinct piece, parsed in one document: each as an item of one sequence."""
        if not self._uses:
            return {}
        items = [_as_item(text) for text in self._uses]
        try:
            docs = list(manifest_yaml.load_all("".join(items)))
        except (yaml.YAMLError, RecursionError):
            raise _Refused from None
        if len(docs) != 1 or not isinstance(docs[0], list) or len(docs[0]) != len(items):
            raise _Refused
        values: dict[str, Any] = {}
        for text, value in zip(self._uses, docs[0], strict=True):
            if not isinstance(value, dict) or len(value) != 1:
                raise _Refused
            key = _KEY_LINE.match(text)
            if key is None or next(iter(value)) != key.group(2):
                raise _Refused
            values[text] = value
        return values

    def _assemble(
        self, plans: list[list[_Entry] | None], whole: dict[int, Any], values: dict[str, Any]
    ) -> list[Any]:
        copies = _Copies(values, self._uses)
        docs: list[Any] = []
        for i, plan in enumerate(plans):
            if plan is None:
                docs.append(None)
                continue
            if i in whole:
                docs.append(whole[i])
                continue
            doc: dict[Any, Any] = {}
            for entry in plan:
                if isinstance(entry, _Split):
                    inner: dict[Any, Any] = {}
                    for piece in entry.pieces:
                        inner.update(copies.take(piece))
                    doc[entry.key] = inner
                else:
                    doc.update(copies.take(entry))
            docs.append(doc)
        return docs


class _Copies:
    """The parsed value of a piece: the first time itself, then fresh copies of it."""

    def __init__(self, values: dict[str, Any], uses: dict[str, int]) -> None:
        self._values = values
        self._uses = uses
        self._frozen: dict[str, bytes | None] = {}

    def take(self, piece: str) -> Any:
        if self._uses[piece] == 1:
            return self._values[piece]
        if piece not in self._frozen:
            value = self._values[piece]
            try:
                self._frozen[piece] = marshal.dumps(value)
            except ValueError:  # a date or a set: copied the slow way
                self._frozen[piece] = None
            return value
        frozen = self._frozen[piece]
        if frozen is None:
            return copy.deepcopy(self._values[piece])
        return marshal.loads(frozen)


def _as_item(piece: str) -> str:
    """``piece`` (one mapping entry) as an item of a block sequence at column 0."""
    indent = len(piece) - len(piece.lstrip(" "))
    if indent >= 2:
        return "-" + piece[1:]
    return "- " + piece[:-1].replace("\n", "\n  ") + "\n"


def _parse_whole(chunk: str) -> Any:
    try:
        docs = list(manifest_yaml.load_all(chunk))
    except (yaml.YAMLError, RecursionError):
        raise _Refused from None
    if len(docs) != 1:
        raise _Refused
    return docs[0]
