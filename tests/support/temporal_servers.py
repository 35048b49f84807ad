"""The Temporal servers the tests start, started one way: the binaries the project installs,
our search attributes, and a startup wait long enough for a loaded two-core CI machine (the
SDK's default of 5 s failed a whole xdist worker's session fixture there once)."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from workflows import search

BIN = Path(sys.executable).parent
STARTUP_TIMEOUT = timedelta(seconds=120)


async def start_dev_server() -> WorkflowEnvironment:
    """A Temporal dev server (search attributes, queries, listing) with our attributes."""
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(BIN / "temporal"),
        search_attributes=list(search.ALL),
        dev_server_log_level="error",
        dev_server_startup_timeout=STARTUP_TIMEOUT,
    )


async def start_test_server() -> WorkflowEnvironment:
    """The time-skipping test server (timers run as fast as the workflow allows)."""
    return await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(BIN / "temporal-test-server"),
        test_server_startup_timeout=STARTUP_TIMEOUT,
    )
