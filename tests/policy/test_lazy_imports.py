"""Loading the CLI and the registry loads declarations only (design.md §3): ``syncagent
render`` and ``--help`` never pay for a reconcile, a command or the runtime's manager, and a
program declaration that imports its reconcile at the top fails here."""

from __future__ import annotations

import subprocess
import sys

# Run in a fresh interpreter: this test process has long imported everything.
LOADED = """
import sys
import syncagent.cli.main
import syncagent.cli.pathways
print("\\n".join(sorted(sys.modules)))
"""


def loaded_modules(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(done.stdout.split())


def heavy(modules: set[str]) -> set[str]:
    """What a declaration must not pull in: a reconcile, a command, the runtime's manager."""
    return {
        m
        for m in modules
        if m.endswith(".reconcile")
        or m.startswith("syncagent.cli.commands.")
        or m in ("syncagent.runtime.manager", "syncagent.controller")
    }


def test_the_cli_and_the_registry_load_no_reconcile_command_or_manager() -> None:
    modules = loaded_modules(LOADED)
    # the registry's pathways are really there (the check below looks at a real load)
    assert {f"syncagent.programs.{p}.program" for p in ("grove", "component")} <= modules
    assert heavy(modules) == set()


def test_the_check_sees_a_reconcile_loaded() -> None:
    modules = loaded_modules(
        LOADED.replace("print", "import syncagent.programs.grove.reconcile\nprint")
    )
    assert "syncagent.programs.grove.reconcile" in heavy(modules)
