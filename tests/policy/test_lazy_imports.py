"""Loading the CLI and the registry loads declarations only (design.md §3): ``syncagent
render`` and ``--help`` never pay for a reconcile, a command or the runtime's manager, and a
program declaration that imports its reconcile at the top fails here."""

from __future__ import annotations

import subprocess
import sys

from syncagent.cli.main import COMMANDS

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


# A command package's flags are its ``__init__``; ``run`` declares its flags as the settings
# dataclasses it parses them into. Every other module of a command package is what it does.
FLAG_MODULES = {"syncagent.cli.run.settings"}


def command_implementation(module: str) -> bool:
    package = module.rpartition(".")[0]
    return package in COMMANDS.values() and module not in FLAG_MODULES


def heavy(modules: set[str]) -> set[str]:
    """What a declaration must not pull in: a reconcile, a command, the runtime's manager."""
    return {
        m
        for m in modules
        if m.endswith(".reconcile")
        or command_implementation(m)
        or m in ("syncagent.runtime.manager", "syncagent.controller")
    }


def test_the_cli_and_the_registry_load_no_reconcile_command_or_manager() -> None:
    modules = loaded_modules(LOADED)
    # the registry's pathways are really there (the check below looks at a real load)
    assert {f"syncagent.programs.{p}.program" for p in ("grove", "component")} <= modules
    assert heavy(modules) == set()


def test_the_check_sees_a_command_loaded() -> None:
    modules = loaded_modules(LOADED.replace("print", "import syncagent.cli.status.show\nprint"))
    assert "syncagent.cli.status.show" in heavy(modules)


def test_the_check_sees_a_reconcile_loaded() -> None:
    modules = loaded_modules(
        LOADED.replace("print", "import syncagent.programs.grove.reconcile\nprint")
    )
    assert "syncagent.programs.grove.reconcile" in heavy(modules)
