"""SIGKILL a worker process and start a new one, over and over: the loop of the crash tests.

Each kill is timed from the moment the worker said it is up (``WorkerProcess.ups``), not from
its restart: a loaded machine's slow start (imports, catalog) would otherwise swallow the
interval, and the kills would only ever hit workers that had not begun to work. What moment
after that a kill lands is the test's ``Aim``: at random (``at_random``) or right after a
write the test watches for.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

from tests.support.worker_process import WorkerProcess

# Waits (on ``halt``) for the moment to kill the worker that just came up; returns what kind
# of moment it was, or None once ``halt`` is set.
Aim = Callable[[threading.Event], str | None]
# How long a restarted worker may take to say it is up before the next kill is aimed anyway.
UP_WAIT = 120.0


def at_random(rng: random.Random, seconds: tuple[float, float]) -> Aim:
    """A moment drawn uniformly from ``seconds`` after the worker came up."""

    def aim(halt: threading.Event) -> str | None:
        return None if halt.wait(rng.uniform(*seconds)) else "random"

    return aim


class WorkerChaos(threading.Thread):
    """While ``firing`` is set, kills the worker at the moments ``aim`` picks and starts a new
    one, until ``halt``. ``may_kill`` is asked before each kill (a test's budget of kills);
    ``kinds`` counts the kills by the kind of moment they landed at. With ``enabled`` false
    it does nothing (a run without kills, to compare)."""

    def __init__(
        self,
        worker: WorkerProcess,
        aim: Aim,
        *,
        may_kill: Callable[[], bool] = lambda: True,
        enabled: bool = True,
        name: str = "chaos",
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.worker, self.aim, self.may_kill, self.enabled = worker, aim, may_kill, enabled
        self.halt = threading.Event()
        self.firing = threading.Event()
        self.kinds: dict[str, int] = {}

    def run(self) -> None:
        if not self.enabled:
            return
        while not self.halt.is_set():
            up = self.worker.ups()
            kind = self.aim(self.halt)
            if kind is None:
                return
            if not self.firing.is_set() or not self.may_kill():
                continue
            self.worker.kill()
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            self.worker.start()
            deadline = time.monotonic() + UP_WAIT
            while self.worker.ups() <= up and time.monotonic() < deadline:
                if self.halt.wait(0.2):
                    return

    def stop(self) -> None:
        """Halt the loop and wait for it to end (a kill under way finishes first)."""
        self.halt.set()
        self.join()
