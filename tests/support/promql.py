"""A small PromQL evaluator over Prometheus text scrapes, for the subset dashboards use.

No Prometheus binary is at hand in tests, so a dashboard's queries are evaluated here, against
two scrapes of a worker (``before`` and ``after``, ``seconds`` apart) as Prometheus would
have stored them: every sample gets the ``job`` and ``instance`` labels of its scrape.

The subset: selectors with ``=``, ``!=``, ``=~``, ``!~`` matchers and a range (``[5m]``);
``rate`` and ``increase`` (over the two scrapes: a series must be in both, as Prometheus needs
two samples); ``sum``, ``count``, ``max``, ``min``, ``avg`` with ``by``/``without``;
``histogram_quantile``; ``vector``; ``label_replace``; ``+ - * /`` between scalars and
vectors (vector-vector one-to-one on all labels but the name); ``or``. Anything else is a
``PromQLError``, so a query outside the subset fails loudly rather than quietly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Union

from prometheus_client.parser import text_string_to_metric_families

Labels = tuple[tuple[str, str], ...]
Series = tuple[Labels, float]
Vector = list[Series]
Value = Union[float, Vector]  # noqa: UP007 - a runtime alias


class PromQLError(ValueError):
    """The query is outside the subset, or malformed."""


def parse_scrape(text: str, job: str = "joinery", instance: str = "worker:8080") -> Vector:
    """The scrape's samples as Prometheus stores them (with ``__name__``, job, instance)."""
    out: Vector = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = {**s.labels, "__name__": s.name, "job": job, "instance": instance}
            out.append((tuple(sorted(labels.items())), float(s.value)))
    return out


@dataclass
class Store:
    before: Vector
    after: Vector
    seconds: float


# -- tokens ---------------------------------------------------------------------------------
TOKEN = re.compile(
    r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<duration>\[\s*\d+[smhd]\s*\])
  | (?P<op>=~|!~|!=|==|[-+*/(){},=])
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
)""",
    re.X,
)
AGGREGATIONS = {"sum", "count", "max", "min", "avg"}
FUNCTIONS = {"rate", "increase", "histogram_quantile", "vector", "label_replace"}


def tokens(query: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    query = re.sub(r"#[^\n]*", "", query)  # comments
    while pos < len(query.rstrip()):
        m = TOKEN.match(query, pos)
        if m is None or m.end() == pos:
            raise PromQLError(f"cannot read {query[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


# -- syntax tree ----------------------------------------------------------------------------
@dataclass
class Num:
    value: float


@dataclass
class Str:
    value: str


@dataclass
class Selector:
    name: str
    matchers: list[tuple[str, str, str]] = field(default_factory=list)
    range_seconds: float | None = None


@dataclass
class Call:
    name: str
    args: list[Node]


@dataclass
class Aggregate:
    op: str
    grouping: list[str] | None
    without: bool
    arg: Node


@dataclass
class Binary:
    op: str
    left: Node
    right: Node


Node = Union[Num, Str, Selector, Call, Aggregate, Binary]  # noqa: UP007


class Parser:
    def __init__(self, query: str) -> None:
        self.toks = tokens(query)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise PromQLError(f"expected {value!r}, found {tok}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.expr()
        if self.peek() is not None:
            raise PromQLError(f"unexpected {self.peek()}")
        return node

    def expr(self) -> Node:
        left = self.additive()
        while self.peek() == ("ident", "or"):
            self.take()
            left = Binary("or", left, self.additive())
        return left

    def additive(self) -> Node:
        left = self.multiplicative()
        while (tok := self.peek()) is not None and tok[1] in ("+", "-"):
            self.take()
            left = Binary(tok[1], left, self.multiplicative())
        return left

    def multiplicative(self) -> Node:
        left = self.primary()
        while (tok := self.peek()) is not None and tok[1] in ("*", "/"):
            self.take()
            left = Binary(tok[1], left, self.primary())
        return left

    def labels(self) -> list[str]:
        self.take("(")
        names: list[str] = []
        while self.peek() != ("op", ")"):
            names.append(self.take()[1])
            if self.peek() == ("op", ","):
                self.take()
        self.take(")")
        return names

    def primary(self) -> Node:
        tok = self.take()
        kind, text = tok
        if kind == "number":
            return Num(float(text))
        if kind == "string":
            return Str(text[1:-1].encode().decode("unicode_escape"))
        if text == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if text == "{":
            self.i -= 1
            return self.selector("")
        if kind != "ident":
            raise PromQLError(f"unexpected {tok}")
        if text in AGGREGATIONS:
            grouping, without = None, False
            if self.peek() in (("ident", "by"), ("ident", "without")):
                without = self.take()[1] == "without"
                grouping = self.labels()
            self.take("(")
            arg = self.expr()
            self.take(")")
            if self.peek() in (("ident", "by"), ("ident", "without")):
                without = self.take()[1] == "without"
                grouping = self.labels()
            return Aggregate(text, grouping, without, arg)
        if text in FUNCTIONS and self.peek() == ("op", "("):
            self.take("(")
            args: list[Node] = []
            while self.peek() != ("op", ")"):
                args.append(self.expr())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return Call(text, args)
        if self.peek() == ("op", "(") or text in ("by", "without", "or", "and", "unless"):
            raise PromQLError(f"{text} is outside the subset")
        return self.selector(text)

    def selector(self, name: str) -> Selector:
        sel = Selector(name)
        if self.peek() == ("op", "{"):
            self.take("{")
            while self.peek() != ("op", "}"):
                label = self.take()[1]
                op = self.take()[1]
                if op not in ("=", "!=", "=~", "!~"):
                    raise PromQLError(f"matcher {op!r}")
                kind, value = self.take()
                if kind != "string":
                    raise PromQLError(f"matcher value {value!r}")
                sel.matchers.append((label, op, value[1:-1]))
                if self.peek() == ("op", ","):
                    self.take()
            self.take("}")
        if (tok := self.peek()) is not None and tok[0] == "duration":
            self.take()
            amount = re.sub(r"[\[\]\s]", "", tok[1])
            sel.range_seconds = (
                float(amount[:-1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[amount[-1]]
            )
        return sel


# -- evaluation -----------------------------------------------------------------------------
def _matches(labels: Labels, sel: Selector) -> bool:
    d = dict(labels)
    if sel.name and d.get("__name__") != sel.name:
        return False
    for label, op, value in sel.matchers:
        have = d.get(label, "")
        if op == "=" and have != value:
            return False
        if op == "!=" and have == value:
            return False
        if op in ("=~", "!~"):
            hit = re.fullmatch(value, have) is not None
            if hit != (op == "=~"):
                return False
    return True


def _drop_name(labels: Labels) -> Labels:
    return tuple((k, v) for k, v in labels if k != "__name__")


def _select(store: Store, sel: Selector, scrape: Vector | None = None) -> Vector:
    return [(ls, v) for ls, v in (store.after if scrape is None else scrape) if _matches(ls, sel)]


def evaluate(query: str, store: Store) -> Value:
    return _eval(Parser(query).parse(), store)


def _eval(node: Node, store: Store) -> Value:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Str):
        raise PromQLError("a string is not a value")
    if isinstance(node, Selector):
        if node.range_seconds is not None:
            raise PromQLError("a range selector outside rate/increase")
        return _select(store, node)
    if isinstance(node, Call):
        return _call(node, store)
    if isinstance(node, Aggregate):
        return _aggregate(node, store)
    return _binary(node, store)


def _vector(value: Value, what: str) -> Vector:
    if not isinstance(value, list):
        raise PromQLError(f"{what} needs a vector")
    return value


def _call(node: Call, store: Store) -> Value:
    if node.name in ("rate", "increase"):
        (arg,) = node.args
        if not isinstance(arg, Selector) or arg.range_seconds is None:
            raise PromQLError(f"{node.name} needs a range selector")
        before = dict(_select(store, arg, store.before))
        out: Vector = []
        for labels, after in _select(store, arg, store.after):
            if labels not in before:
                continue  # one sample: Prometheus has no rate either
            delta = after - before[labels] if after >= before[labels] else after  # a reset
            out.append(
                (_drop_name(labels), delta / store.seconds if node.name == "rate" else delta)
            )
        return out
    if node.name == "vector":
        (arg,) = node.args
        value = _eval(arg, store)
        if isinstance(value, list):
            raise PromQLError("vector() needs a scalar")
        return [((), value)]
    if node.name == "histogram_quantile":
        q_node, vec_node = node.args
        q = _eval(q_node, store)
        if isinstance(q, list):
            raise PromQLError("histogram_quantile needs a scalar quantile")
        return _quantile(q, _vector(_eval(vec_node, store), "histogram_quantile"))
    if node.name == "label_replace":
        vec_node, dst, repl, src, regex = node.args
        strings = [a.value for a in (dst, repl, src, regex) if isinstance(a, Str)]
        if len(strings) != 4:
            raise PromQLError("label_replace needs string arguments")
        d, r, s, x = strings
        out = []
        for labels, value in _vector(_eval(vec_node, store), "label_replace"):
            have = dict(labels)
            m = re.fullmatch(x, have.get(s, ""))
            if m is not None:
                new = m.expand(re.sub(r"\$(\d+)", r"\\\1", r))
                have = {k: v for k, v in have.items() if k != d}
                if new:
                    have[d] = new
            out.append((tuple(sorted(have.items())), value))
        return out
    raise PromQLError(f"function {node.name}")


def _quantile(q: float, buckets: Vector) -> Vector:
    groups: dict[Labels, list[tuple[float, float]]] = {}
    for labels, value in buckets:
        d = dict(_drop_name(labels))
        le = d.pop("le", None)
        if le is None:
            continue
        groups.setdefault(tuple(sorted(d.items())), []).append((float(le), value))
    out: Vector = []
    for labels, points in groups.items():
        points.sort()
        out.append((labels, _bucket_quantile(q, points)))
    return out


def _bucket_quantile(q: float, points: list[tuple[float, float]]) -> float:
    """Prometheus's interpolation over cumulative buckets (the last must be +Inf)."""
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    if not points or points[-1][0] != math.inf:
        return math.nan
    total = points[-1][1]
    if total == 0:
        return math.nan
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for upper, count in points:
        if count >= rank:
            if upper == math.inf:
                return points[-2][0] if len(points) > 1 else math.nan
            if count == lower_count:
                return upper
            return lower_bound + (upper - lower_bound) * (rank - lower_count) / (
                count - lower_count
            )
        lower_bound, lower_count = upper, count
    return math.nan


def _aggregate(node: Aggregate, store: Store) -> Vector:
    vec = _vector(_eval(node.arg, store), node.op)
    groups: dict[Labels, list[float]] = {}
    for labels, value in vec:
        d = dict(_drop_name(labels))
        if node.grouping is None:
            key: Labels = ()
        elif node.without:
            key = tuple(sorted((k, v) for k, v in d.items() if k not in node.grouping))
        else:
            key = tuple((k, d[k]) for k in sorted(node.grouping) if d.get(k))
        groups.setdefault(key, []).append(value)
    ops: dict[str, Callable[[list[float]], float]] = {
        "sum": math.fsum,
        "count": lambda vs: float(len(vs)),
        "max": max,
        "min": min,
        "avg": lambda vs: math.fsum(vs) / len(vs),
    }
    return [(key, ops[node.op](values)) for key, values in groups.items()]


def _arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def _binary(node: Binary, store: Store) -> Value:
    left, right = _eval(node.left, store), _eval(node.right, store)
    if node.op == "or":
        lv, rv = _vector(left, "or"), _vector(right, "or")
        seen = {_drop_name(ls) for ls, _ in lv}
        return lv + [(ls, v) for ls, v in rv if _drop_name(ls) not in seen]
    if not isinstance(left, list) and not isinstance(right, list):
        return _arith(node.op, left, right)
    if not isinstance(left, list):
        return [(_drop_name(ls), _arith(node.op, left, v)) for ls, v in _vector(right, "")]
    if not isinstance(right, list):
        return [(_drop_name(ls), _arith(node.op, v, right)) for ls, v in left]
    index: dict[Labels, float] = {}
    for ls, v in right:
        key = _drop_name(ls)
        if key in index:
            raise PromQLError(f"many-to-one match on {dict(key)}")
        index[key] = v
    return [
        (_drop_name(ls), _arith(node.op, v, index[_drop_name(ls)]))
        for ls, v in left
        if _drop_name(ls) in index
    ]


def selectors(query: str) -> Iterator[Selector]:
    """Every selector in the query (for checks on names and labels)."""

    def walk(node: Node) -> Iterator[Selector]:
        if isinstance(node, Selector):
            yield node
        elif isinstance(node, Call):
            for a in node.args:
                yield from walk(a)
        elif isinstance(node, Aggregate):
            yield from walk(node.arg)
        elif isinstance(node, Binary):
            yield from walk(node.left)
            yield from walk(node.right)

    yield from walk(Parser(query).parse())
