"""A watcher's workflow call cancelled at shutdown (Ctrl-C) is not a failure to report."""

from __future__ import annotations

import concurrent.futures
import logging

import pytest

from worker.running.watch import _log_failure


def test_a_cancelled_call_logs_nothing_and_raises_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    future: concurrent.futures.Future[None] = concurrent.futures.Future()
    assert future.cancel()
    with caplog.at_level(logging.WARNING):
        _log_failure(future)  # exception() on it would raise CancelledError
    assert not caplog.records


def test_a_failed_call_is_logged_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    future: concurrent.futures.Future[None] = concurrent.futures.Future()
    future.set_exception(RuntimeError("workflow not found"))
    with caplog.at_level(logging.WARNING):
        _log_failure(future)
    assert [r.getMessage() for r in caplog.records] == [
        "workflow call from a watcher failed: workflow not found"
    ]
