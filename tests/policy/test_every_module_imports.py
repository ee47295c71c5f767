"""Every module of ``syncagent`` imports: a module moved or renamed leaves no import of its
old name behind, also in code no other unit test loads (``blame --history``, ``dev-cluster``)."""

from __future__ import annotations

import importlib
import pkgutil

import syncagent


def module_names() -> list[str]:
    found = pkgutil.walk_packages(syncagent.__path__, prefix="syncagent.")
    return sorted(info.name for info in found)


def test_every_module_imports() -> None:
    names = module_names()
    assert "syncagent.cli.commands.blame_history" in names  # the walk reaches nested packages
    failed = {}
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as err:
            failed[name] = str(err)
    assert failed == {}
