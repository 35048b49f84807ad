"""Batcher: what arrives together with one key goes out as one call, each caller its answer."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from activities.ec2.batcher import Batcher


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
