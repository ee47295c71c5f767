"""A graph reconcile checks the graph against the CRD schema once: validation and the
``UnknownFields`` condition read the same answer, from the checks the caller owns."""

from __future__ import annotations

from typing import Any

import anyio

from syncagent.api import schemacheck
from syncagent.api.schemas import LiveChecks
from syncagent.programs import status
from syncagent.programs.capabilities import offline
from syncagent.programs.graph import graph_context, run_graph
from syncagent.programs.registry import Registry
from syncagent.programs.view import DictStore
from syncagent.programs.writes import Writer
from syncagent.ssa import SsaError
from syncagent.ssa.takeover import TakeoverPolicy
from tests.support.graphs import component, graph
from tests.support.toypathway import CAPABILITY, OPT_IN, ToyFunctions, toy_program


class Counting(LiveChecks):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def check(self, doc: Any) -> schemacheck.Result:
        self.calls += 1
        return super().check(doc)


class Failing(ToyFunctions):
    async def reconcile(self, ctx: Any) -> Any:
        raise SsaError("ToySet/ns/g", "boom")


def test_one_reconcile_checks_the_schema_once_and_reports_unknown_fields() -> None:
    doc = graph("ns", "g", [component("frontend", "frontend")], **{OPT_IN: "true"})
    doc["metadata"]["uid"] = "u1"
    doc["spec"]["components"][0]["colour"] = "blue"  # an unknown (pruned) field
    checks = Counting()
    ctx = graph_context(
        doc,
        offline({}, declared=(CAPABILITY,)),
        store=DictStore(),
        writer=Writer(applier=None, takeover=TakeoverPolicy()),  # type: ignore[arg-type]  # the program writes nothing
        discovery_backend="kubernetes",
        programs=Registry((toy_program(Failing()),)),
        checks=checks,
    )
    result = anyio.run(run_graph, ctx)
    unknown = status.find(result.status.get("conditions"), "UnknownFields") or {}
    assert "colour" in str(unknown.get("message"))
    assert checks.calls == 1
