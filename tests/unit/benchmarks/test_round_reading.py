"""The in-process round benchmark runs a round that places every pod on a claim in flight,
and leaves the API-reading modules as it found them."""

from __future__ import annotations

from activities.kubernetes import nodepools, raw
from benchmarks import round_reading


def test_a_small_round_places_every_pod_and_puts_the_modules_back() -> None:
    before = (nodepools.list_, raw.list_all)
    r = round_reading.measure(12, 2)
    assert r["inFlightClaims"] == 12 and r["placedOnClaims"] == 12
    assert set(r["next"]) == {"read", "build", "solve", "round"}
    assert (nodepools.list_, raw.list_all) == before
