"""Helpers the test tiers and benchmarks share (imported as ``tests.support``)."""
