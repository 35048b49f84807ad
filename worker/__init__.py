"""The worker process and the ``joinery`` command, one sub-package per job.

- ``worker.running``: the running worker (Temporal worker, watchers, health, metrics,
  telemetry, settings);
- ``worker.cli``: the ``joinery`` sub-commands (plan, catalog, worker, pause, resume,
  disrupt, status, dev, doctor, explain);
- ``worker.plan_inputs``: what ``joinery plan`` reads (manifest files, catalogs, a live
  cluster).

The commands use the other two; ``running`` and ``plan_inputs`` use neither ``cli`` nor each
other. ``worker.usage`` (bad input as one line, exit 2) is shared by all three.
"""
