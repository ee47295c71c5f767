"""``syncagent render --program``: render a graph with a chosen program (offline)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from syncagent.cli.errors import UserError
from syncagent.programs.capabilities import Capabilities
from syncagent.programs.program import Program, Route
from syncagent.programs.registry import Registry


def choose(
    program: str,
    *,
    programs: Registry,
    annotations: Mapping[str, str],
    components: Sequence[Mapping[str, Any]],
    caps: Capabilities,
    ref: str,
) -> Program:
    """The routed program (``auto``) or the one ``--program`` names; a graph the named program
    cannot take, or whose capability is switched off, is an error."""
    route = Route(annotations, components, caps)
    if program == "auto":
        return programs.by_pathway(programs.select(route).pathway)
    chosen = programs.by_name(program)
    reason = chosen.functions.cannot_render(route)
    if reason:
        raise UserError(
            f"{ref}: cannot render with --program {program}: {reason}; use --program component"
        )
    needed = chosen.capability
    if needed is not None and not caps.has(needed):
        raise UserError(f"{ref}: --program {program} needs --capability {needed.name}=true")
    return chosen
