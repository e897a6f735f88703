"""docs/database.md lists exactly the tables and columns a fresh database has, with their types."""

from __future__ import annotations

import re
from pathlib import Path

from rlm_desktop.store import Store

DOC = Path(__file__).resolve().parents[2] / "docs" / "database.md"
SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "FLOAT"}


def documented_tables() -> dict[str, dict[str, str]]:
    tables: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"## (\w+)", line)
        if heading:
            current = tables.setdefault(heading.group(1), {})
            continue
        row = re.match(r"\| `(\w+)` \| (\w+) \|", line)
        if row and current is not None:
            current[row.group(1)] = row.group(2)
    return tables


def test_the_schema_page_matches_a_fresh_database(tmp_path: Path) -> None:
    store = Store(tmp_path / "fresh.db")
    actual = {
        table: {name: SQL_TYPES[kind] for name, kind in store.db[table].columns_dict.items()}  # type: ignore[union-attr]
        for table in store.db.table_names()
        if not table.startswith("_") and "_fts" not in table
    }
    store.close()
    assert documented_tables() == actual
