"""``tests.support.round_history`` over a recorded disruption history (tests/histories): the
commands a round carried out, with their replacements, and where each round's wall time went."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.converter import DataConverter

from tests.support.round_history import read_run

HISTORY = Path(__file__).resolve().parents[1] / "histories" / "disruption_rounds.json"


async def test_commands_and_timings_of_recorded_rounds() -> None:
    history = WorkflowHistory.from_json("disruption", json.loads(HISTORY.read_text()))
    rounds = await read_run(history.events, DataConverter.default)
    assert [(c.claims, c.replacements) for c in rounds.commands] == [
        (["claim-a", "claim-b"], ["default-r0ab"]),
        (["claim-c"], ["default-r0c"]),
    ]
    assert rounds.rounds == 2
    first, second = rounds.timings
    assert first.validation == second.validation == 15.0
    assert first.polls == 5.0  # one wait between readiness checks of default-r0ab
    for t in rounds.timings:
        # nothing overlaps in these rounds: the parts add up to the wall time
        parts = t.validation + t.polls + t.activities + t.machinery
        assert parts == pytest.approx(t.wall, abs=1e-6)
        assert 0 < t.machinery < 1 and 0 <= t.dispatch <= t.machinery
        assert t.overhead == pytest.approx(t.machinery / (t.wall - t.validation))
