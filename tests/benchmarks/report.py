"""Benchmark figures collected during `make bench` and printed as one table at the end."""

from __future__ import annotations

from dataclasses import dataclass

FIGURES: list[Figure] = []


@dataclass(frozen=True)
class Figure:
    """One measured figure."""

    section: str
    name: str
    value: str
    note: str


def record_figure(section: str, name: str, value: str, note: str = "") -> None:
    """Keep a figure for the closing table (and print it at once, for `-s` runs)."""
    FIGURES.append(Figure(section, name, value, note))
    print(f"[{section}] {name}: {value} {note}".rstrip())


def table() -> str:
    """The figures as a Markdown table."""
    lines = ["| area | figure | value | note |", "|---|---|---|---|"]
    lines += [f"| {f.section} | {f.name} | {f.value} | {f.note} |" for f in FIGURES]
    return "\n".join(lines)
