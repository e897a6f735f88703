"""Fixtures for the export tests: the store tests' open store and recorded runs."""

from tests.store.conftest import record_run, store

__all__ = ["record_run", "store"]
