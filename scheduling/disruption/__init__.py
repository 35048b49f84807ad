"""Disruption decisions: which managed nodes one round removes or replaces, and why not more.

Pure and deterministic: no I/O, no clock (``now`` is an input). DESIGN.md's
``joinery plan --disruption`` contract and docs/disruption.md give the rules.
"""
