"""``syncagent render --program``: render a graph with a chosen program (offline)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from syncagent.cli.errors import UserError
from syncagent.programs import routing
from syncagent.programs.capabilities import Capabilities
from syncagent.render import Environment, Rendered, render_graph
from syncagent.render.disaggregatedset import render_ds_graph
from syncagent.render.grove import render_grove_graph

PROGRAMS = ("auto", "component", "disaggregatedset", "grove")
_PATHWAYS = {
    "component": routing.Pathway.COMPONENT,
    "disaggregatedset": routing.Pathway.DISAGGREGATED_SET,
    "grove": routing.Pathway.GROVE,
}


def forced_pathway(
    program: str, *, components: Sequence[Mapping[str, Any]], caps: Capabilities, ref: str
) -> routing.Pathway:
    """The pathway of an explicit ``--program``; a graph the DS program cannot take is an error."""
    pathway = _PATHWAYS[program]
    if pathway is routing.Pathway.DISAGGREGATED_SET:
        reason = routing.ds_ineligibility(components, caps)
        if reason:
            raise UserError(
                f"{ref}: cannot render with --program disaggregatedset: {reason}; use "
                "--program component"
            )
    if pathway is routing.Pathway.GROVE and not caps.grove:
        raise UserError(f"{ref}: --program grove needs --capability grove=true")
    return pathway


def render_pathway(
    graph: Mapping[str, Any], pathway: routing.Pathway, *, env: Environment, lws: bool
) -> list[Rendered]:
    if pathway is routing.Pathway.GROVE:
        return render_grove_graph(graph, env=env)
    if pathway is routing.Pathway.DISAGGREGATED_SET:
        return render_ds_graph(graph, env=env)
    return render_graph(graph, env=env, lws=lws)
