"""The test-side PromQL evaluator (tests/support/promql.py), on scrapes whose answers are
worked out by hand: a dashboards test is only as good as it."""

from __future__ import annotations

import math

import pytest

from tests.support.promql import PromQLError, Store, evaluate, parse_scrape, selectors

BEFORE = """
# TYPE c_total counter
c_total{pool="a",zone="x"} 10
c_total{pool="a",zone="y"} 4
c_total{pool="b",zone="x"} 1
# TYPE u gauge
u{pool="a",resource_type="cpu"} 3
u{pool="b",resource_type="cpu"} 1
# TYPE l gauge
l{pool="a",resource_type="cpu"} 12
# TYPE h histogram
h_bucket{le="1.0"} 0
h_bucket{le="2.0"} 0
h_bucket{le="+Inf"} 0
h_count 0
h_sum 0
"""
AFTER = """
# TYPE c_total counter
c_total{pool="a",zone="x"} 70
c_total{pool="a",zone="y"} 4
c_total{pool="b",zone="x"} 1
c_total{pool="c",zone="x"} 9
# TYPE u gauge
u{pool="a",resource_type="cpu"} 3
u{pool="b",resource_type="cpu"} 1
# TYPE l gauge
l{pool="a",resource_type="cpu"} 12
# TYPE h histogram
h_bucket{le="1.0"} 4
h_bucket{le="2.0"} 8
h_bucket{le="+Inf"} 10
h_count 10
h_sum 14
# TYPE s summary
s{quantile="0.5"} 7
s_sum 20
s_count 3
"""


@pytest.fixture
def store() -> Store:
    return Store(parse_scrape(BEFORE), parse_scrape(AFTER), seconds=60)


def _by(value: object, label: str) -> dict[str, float]:
    assert isinstance(value, list)
    return {dict(ls).get(label, ""): v for ls, v in value}


def test_selectors_and_matchers(store: Store) -> None:
    assert len(evaluate('c_total{job=~".*"}', store)) == 4  # type: ignore[arg-type]
    assert _by(evaluate('c_total{pool!="a",zone="x"}', store), "pool") == {"b": 1, "c": 9}
    assert _by(evaluate('c_total{pool=~"a|b",zone!~"y"}', store), "pool") == {"a": 70, "b": 1}
    assert evaluate('c_total{pool=~"a.*x"}', store) == []  # regexes are anchored


def test_rate_needs_the_series_in_both_scrapes(store: Store) -> None:
    rates = _by(evaluate('sum by (pool) (rate(c_total{zone="x"}[5m]))', store), "pool")
    assert rates == {"a": 1.0, "b": 0.0}  # c appeared between the scrapes: no rate yet
    assert _by(evaluate("increase(c_total[1h])", store), "zone") == {"x": 0.0, "y": 0.0}


def test_aggregations_group_as_prometheus_does(store: Store) -> None:
    assert _by(evaluate("sum by (pool) (c_total)", store), "pool") == {
        "a": 74,
        "b": 1,
        "c": 9,
    }
    assert _by(evaluate("count(c_total) by (zone)", store), "zone") == {"x": 3, "y": 1}
    assert evaluate("max(c_total)", store) == [((), 70.0)]
    # a grouping label no series has is simply absent from the result
    assert _by(evaluate("sum by (cluster, pool) (c_total)", store), "pool")["a"] == 74


def test_arithmetic_matches_series_one_to_one(store: Store) -> None:
    assert _by(evaluate("u / l", store), "pool") == {"a": 0.25}  # b has no limit
    assert _by(evaluate("u * 0 + 2", store), "pool") == {"a": 2, "b": 2}
    assert evaluate("(count(u{pool='z'}) or vector(0)) / count(u)".replace("'", '"'), store) == [
        ((), 0.0)
    ]
    merged = evaluate("l or u * 0", store)
    assert _by(merged, "pool") == {"a": 12, "b": 0}


def test_histogram_quantile_interpolates(store: Store) -> None:
    (only,) = evaluate("histogram_quantile(0.5, h_bucket)", store)  # type: ignore[misc]
    assert only[1] == pytest.approx(1.25)  # rank 5 of 10: a quarter into (1, 2]
    (top,) = evaluate("histogram_quantile(0.95, h_bucket)", store)  # type: ignore[misc]
    assert top[1] == 2.0  # in the +Inf bucket: the highest finite bound
    (rated,) = evaluate("histogram_quantile(0.5, rate(h_bucket[10m]))", store)  # type: ignore[misc]
    assert rated[1] == pytest.approx(1.25)
    (empty,) = evaluate("histogram_quantile(0.5, h_bucket)", Store([], parse_scrape(BEFORE), 1))  # type: ignore[misc]
    assert math.isnan(empty[1])


def test_summary_quantiles_and_label_replace(store: Store) -> None:
    assert _by(evaluate('max(s{quantile="0.5"})', store), "") == {"": 7}
    replaced = evaluate('label_replace(u, "team", "t-$1", "pool", "(.+)")', store)
    assert _by(replaced, "team") == {"t-a": 3, "t-b": 1}


def test_outside_the_subset_fails_loudly(store: Store) -> None:
    for query in ("topk(3, c_total)", "c_total == 1", "sum(c_total) and u", "c_total[5m]"):
        with pytest.raises(PromQLError):
            evaluate(query, store)


def test_selectors_lists_every_selector() -> None:
    names = [
        s.name
        for s in selectors("sum(rate(a[5m])) / (b or vector(0)) + c{x='1'}".replace("'", '"'))
    ]
    assert names == ["a", "b", "c"]
