"""The burst's CreateFleet answers as the scale benchmark reports them."""

from __future__ import annotations

from sandbox.scenarios.fleet_answers import busy_seconds, summarize


def test_busy_seconds_is_the_union_of_the_intervals() -> None:
    assert busy_seconds([]) == 0
    assert busy_seconds([(0, 2), (1, 3), (5, 6)]) == 4
    assert busy_seconds([(5, 6), (0, 10)]) == 10


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
