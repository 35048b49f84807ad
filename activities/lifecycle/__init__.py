"""Temporal activities of one NodeClaim's life: launch, registration, initialization, drain,
termination. Each module holds the logic as plain functions over the adapters; ``defs.py``
wraps them as activities."""
