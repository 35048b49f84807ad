"""What the test tiers share: builders for manifests and catalogs, waiting helpers, fixtures.

Tests import these by name (``from tests.support.manifests import nodepool``); modules here
hold no tests, and pytest does not collect them.
"""
