"""The UI benchmarks' Qt fixtures (those of the UI tests), and every benchmark figure printed as
one Markdown table at the end of `make bench`."""

from __future__ import annotations

from typing import Any

from tests.benchmarks.report import FIGURES, table
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Append the figures table to pytest's summary."""
    if FIGURES:
        terminalreporter.write_sep("=", "benchmark figures")
        terminalreporter.write_line(table())
