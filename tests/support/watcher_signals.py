"""A ``Watchers`` with no cluster behind it, whose disruption triggers are recorded: the
watch handlers' decisions tested without the API server."""

from __future__ import annotations

import pytest

from worker.running.watchers import Watchers


def signalling_watchers(monkeypatch: pytest.MonkeyPatch) -> tuple[Watchers, list[str]]:
    """The watchers, and the list each ``trigger_disruption`` call appends "changed" to."""
    watchers = Watchers(
        kube=None,  # type: ignore[arg-type]
        client=None,  # type: ignore[arg-type]
        loop=None,  # type: ignore[arg-type]
        cluster="c",
        task_queue="q",
    )
    signals: list[str] = []
    monkeypatch.setattr(watchers, "trigger_disruption", lambda gone=None: signals.append("changed"))
    return watchers, signals
