"""Fixtures for the transport tests: the worker tests' in-process clusters on port 0, whose
teardown is checked (servers stopped, channels closed, no RPC or recv threads left)."""

from tests.worker.conftest import local_cluster  # noqa: F401  (the same fixture)
