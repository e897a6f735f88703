"""Fixtures for the import tests: the store tests' open store, recorded runs and in-process CLI."""

from tests.store.conftest import cli, record_run, store

__all__ = ["cli", "record_run", "store"]
