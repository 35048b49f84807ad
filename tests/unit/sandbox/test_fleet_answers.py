"""The burst's CreateFleet answers as the scale benchmark reports them."""

from __future__ import annotations

from sandbox.scenarios.fleet_answers import summarize
from sandbox.scenarios.stats import percentile, union_length


def test_the_shared_summaries() -> None:
    assert union_length([]) == 0
    assert union_length([(0, 2), (1, 3), (5, 6)]) == 4
    assert union_length([(5, 6), (0, 10)]) == 10
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0 and percentile([1.0] * 99 + [7.0], 0.99) == 1.0


def test_summarize_counts_the_answered_calls_of_the_burst_only() -> None:
    calls = [
        {"began": 100.0, "seconds": 1.0, "count": 30},
        {"began": 100.5, "seconds": 2.0, "count": 2},
        {"began": 110.0, "seconds": 0.5, "count": 1},
        {"began": 50.0, "seconds": 9.0, "count": 1},  # before the burst
        {"began": 111.0, "count": 4},  # not answered yet
    ]
    got = summarize(calls, since=99.0, until=120.0)
    assert got == {
        "calls": 3,
        "instances": 33,
        "answerP50": 1.0,
        "answerP99": 2.0,
        "answerMax": 2.0,
        "busySeconds": 3.0,
    }
    assert summarize(calls, since=200.0, until=300.0) == {"calls": 0, "instances": 0}
