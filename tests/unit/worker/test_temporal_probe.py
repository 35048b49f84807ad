"""``/readyz`` follows whether Temporal answers: the probe turns a failing or slow health
check into not-ready, and a good answer back into ready."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from datetime import timedelta

import pytest

from tests.support.waiting import until
from worker.running.health import HealthServer, TemporalProbe


def readyz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=3) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


@pytest.mark.asyncio
async def test_readyz_follows_temporal_reachability() -> None:
    answer: dict[str, object] = {"mode": "ok"}

    async def check(timeout: timedelta) -> bool:
        if answer["mode"] == "down":
            raise RuntimeError("connection refused")
        if answer["mode"] == "slow":
            await asyncio.sleep(timeout.total_seconds() + 5)
        return True

    probe = TemporalProbe(check, interval=0.05, timeout=0.2)
    health = HealthServer(0, lambda: probe.reachable, host="127.0.0.1").start()
    task = asyncio.create_task(probe.run())
    try:
        await asyncio.sleep(0.2)
        assert await asyncio.to_thread(readyz, health.port) == 200
        for mode in ("down", "slow"):
            answer["mode"] = mode
            await until(lambda: not probe.reachable, timeout=10, every=0.05)
            assert await asyncio.to_thread(readyz, health.port) == 503
            answer["mode"] = "ok"
            await until(lambda: probe.reachable, timeout=10, every=0.05)
            assert await asyncio.to_thread(readyz, health.port) == 200
    finally:
        task.cancel()
        health.stop()
