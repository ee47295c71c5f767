"""Figures a test counts for the lead to quote, printed at the end of the run (no tests here).

A test calls :func:`count`; ``tests/conftest.py`` prints every table that has counts in the
terminal summary, one line per table.
"""

from __future__ import annotations

from collections import Counter, defaultdict

TABLES: defaultdict[str, Counter[str]] = defaultdict(Counter)


def count(table: str, key: str, n: int = 1) -> None:
    TABLES[table][key] += n


def lines() -> list[str]:
    out = []
    for table, counts in sorted(TABLES.items()):
        items = ", ".join(f"{key} {n}" for key, n in sorted(counts.items()))
        out.append(f"{table}: {items}")
    return out
