"""The provisioning solver in layers, each built on the one before: setup (pools, existing
nodes), topology domains, pod classes, claims, placement, pricing, slack filling.
``scheduling.solver.Solver`` is the top layer and the entry point."""
