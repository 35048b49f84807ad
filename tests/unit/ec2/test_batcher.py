"""Batcher: what arrives together with one key goes out as one call, each caller its answer."""

from __future__ import annotations

import ctypes
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from activities.ec2.batcher import Batcher, LeaderInterrupted


class Recorder:
    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[tuple[str, list[int]]] = []
        self.lock = threading.Lock()
        self.fail_on = fail_on

    def __call__(self, key: str, items: list[int]) -> list[int | BaseException]:
        with self.lock:
            self.calls.append((key, list(items)))
        if key == self.fail_on:
            raise RuntimeError(f"{key} refused")
        return [ValueError(f"odd {i}") if i % 2 and key == "odd-fails" else i * 10 for i in items]


def run_together(batcher: Batcher[str, int, int], work: list[tuple[str, int]]) -> list[object]:
    """Submit every item from its own thread, all released at once."""
    start = threading.Barrier(len(work))

    def one(key: str, item: int) -> object:
        start.wait()
        try:
            return batcher.submit(key, item)
        except Exception as exc:  # the answer under test
            return exc

    with ThreadPoolExecutor(len(work)) as pool:
        return list(pool.map(lambda kw: one(*kw), work))


def test_items_arriving_together_go_out_as_one_call_per_key() -> None:
    rec = Recorder()
    batcher: Batcher[str, int, int] = Batcher(rec, idle=0.2, max_wait=2.0, max_items=100)
    work = [("a", i) for i in range(6)] + [("b", i) for i in range(3)]
    answers = run_together(batcher, work)
    assert answers == [i * 10 for _, i in work]
    assert sorted((k, sorted(items)) for k, items in rec.calls) == [
        ("a", [0, 1, 2, 3, 4, 5]),
        ("b", [0, 1, 2]),
    ]


def test_a_full_batch_goes_out_and_the_next_item_opens_another() -> None:
    rec = Recorder()
    batcher: Batcher[str, int, int] = Batcher(rec, idle=0.2, max_wait=2.0, max_items=4)
    answers = run_together(batcher, [("a", i) for i in range(10)])
    assert answers == [i * 10 for i in range(10)]
    assert sorted(len(items) for _, items in rec.calls) == [2, 4, 4]
    # a caller's limit below max_items caps the batch it opens
    rec.calls.clear()
    assert batcher.submit("c", 1, limit=1) == 10
    assert rec.calls == [("c", [1])]


def test_a_failed_call_is_every_callers_error_and_per_item_errors_stay_their_own() -> None:
    rec = Recorder(fail_on="bad")
    batcher: Batcher[str, int, int] = Batcher(rec, idle=0.1, max_wait=1.0, max_items=100)
    answers = run_together(batcher, [("bad", i) for i in range(3)])
    assert [str(a) for a in answers] == ["bad refused"] * 3
    answers = run_together(batcher, [("odd-fails", i) for i in range(4)])
    assert [a if isinstance(a, int) else str(a) for a in answers] == [0, "odd 1", 20, "odd 3"]


def test_a_lone_item_waits_only_the_idle_window_and_a_stream_at_most_max_wait() -> None:
    rec = Recorder()
    batcher: Batcher[str, int, int] = Batcher(rec, idle=0.05, max_wait=0.4, max_items=1000)
    began = time.monotonic()
    assert batcher.submit("a", 7) == 70
    assert time.monotonic() - began < 0.4
    # items every 20 ms keep the batch open past the idle window, but not past max_wait
    threads = []
    for i in range(40):
        t = threading.Thread(target=batcher.submit, args=("s", i))
        t.start()
        threads.append(t)
        time.sleep(0.02)
    for t in threads:
        t.join()
    streamed = [items for key, items in rec.calls if key == "s"]
    assert sum(len(items) for items in streamed) == 40
    assert len(streamed) >= 2, "a steady stream must not hold one batch open for ever"


def test_a_run_answering_the_wrong_number_of_items_fails_them_all() -> None:
    batcher: Batcher[str, int, int] = Batcher(
        lambda key, items: [1], idle=0.05, max_wait=1.0, max_items=10
    )
    answers = run_together(batcher, [("a", 1), ("a", 2)])
    assert all(isinstance(a, RuntimeError) for a in answers)
    with pytest.raises(RuntimeError, match="answered 1 of 2"):
        raise answers[0]  # type: ignore[misc]


class Stopped(BaseException):
    """What the Temporal SDK raises in a cancelled activity's thread (not an Exception)."""


def _raise_in(thread: threading.Thread, exc: type[BaseException]) -> None:
    """Raise ``exc`` inside ``thread`` the way the SDK cancels a threaded activity."""
    assert thread.ident is not None
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(exc)
    )
    assert done == 1


class Caller:
    """One submit on a thread of its own, its answer or exception kept."""

    def __init__(self, batcher: Batcher[str, int, int], item: int) -> None:
        self.outcome: object = None
        self.thread = threading.Thread(target=self._run, args=(batcher, item), daemon=True)
        self.thread.start()

    def _run(self, batcher: Batcher[str, int, int], item: int) -> None:
        try:
            self.outcome = batcher.submit("a", item)
        except BaseException as exc:  # the answer under test, Stopped included
            self.outcome = exc

    def finished(self, within: float = 5.0) -> bool:
        self.thread.join(within)
        return not self.thread.is_alive()


def _open_batch(batcher: Batcher[str, int, int], followers: int) -> tuple[Caller, list[Caller]]:
    leader = Caller(batcher, 0)
    time.sleep(0.2)
    rest = [Caller(batcher, i) for i in range(1, followers + 1)]
    time.sleep(0.3)
    return leader, rest


def test_a_leader_stopped_while_gathering_releases_every_follower() -> None:
    """The leader's activity is cancelled while the batch is open: it ends with the stop,
    each follower with LeaderInterrupted (retryable), none left waiting; the next item
    opens a new batch that goes out."""
    rec = Recorder()
    batcher: Batcher[str, int, int] = Batcher(rec, idle=3.0, max_wait=60.0, max_items=100)
    leader, rest = _open_batch(batcher, 3)
    _raise_in(leader.thread, Stopped)
    assert leader.finished() and isinstance(leader.outcome, Stopped)
    assert all(c.finished() for c in rest)
    assert all(isinstance(c.outcome, LeaderInterrupted) for c in rest), [c.outcome for c in rest]
    assert rec.calls == []  # nothing was sent
    assert batcher.submit("a", 7) == 70 and rec.calls == [("a", [7])]


def test_a_follower_waiting_on_its_batch_can_be_stopped() -> None:
    """A follower's activity cancelled while it waits ends at once; the batch goes on."""
    rec = Recorder()
    batcher: Batcher[str, int, int] = Batcher(rec, idle=2.0, max_wait=60.0, max_items=100)
    leader, (follower, other) = _open_batch(batcher, 2)
    _raise_in(follower.thread, Stopped)
    assert follower.finished(within=1.5) and isinstance(follower.outcome, Stopped)
    assert leader.finished() and other.finished()
    assert (leader.outcome, other.outcome) == (0, 20)


def test_a_leader_stopped_during_the_call_gives_followers_a_retryable_error() -> None:
    """Stopped inside the call: the answers are lost; followers must not receive the
    leader's own stop (their activities were not cancelled), but a retryable error."""

    def stopped_call(key: str, items: list[int]) -> list[int | BaseException]:
        raise Stopped()

    batcher: Batcher[str, int, int] = Batcher(stopped_call, idle=0.3, max_wait=5.0, max_items=9)
    leader, rest = _open_batch(batcher, 2)
    assert leader.finished() and isinstance(leader.outcome, Stopped)
    assert all(c.finished() and isinstance(c.outcome, LeaderInterrupted) for c in rest)
