"""A program's errors become the graph's status in one place (``programs.graph.reconcile``,
issue 28 item 3), whatever the pathway: a program only raises."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from syncagent.kube.objects import OwnerRef
from syncagent.programs import status
from syncagent.programs.capabilities import offline
from syncagent.programs.graph import graph_context, run_graph
from syncagent.programs.registry import Registry
from syncagent.programs.view import DictStore
from syncagent.programs.writes import Writer, refused
from syncagent.render import RenderError
from syncagent.ssa import PreconditionError, SsaError
from syncagent.ssa.takeover import TakeoverPolicy
from tests.support.graphs import component, graph
from tests.support.toypathway import CAPABILITY, OPT_IN, ToyFunctions, toy_program

OWNER = OwnerRef("nvidia.com/v1beta1", "DynamoGraphDeployment", "g", "u1")


class Raising(ToyFunctions):
    """The toy pathway, failing with ``error`` on every reconcile."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def reconcile(self, ctx: Any) -> Any:
        raise self.error


def run(error: Exception) -> Any:
    doc = graph("ns", "g", [component("frontend", "frontend")], **{OPT_IN: "true"})
    doc["metadata"]["uid"] = "u1"
    writer = Writer(applier=None, takeover=TakeoverPolicy())  # type: ignore[arg-type]  # the program writes nothing
    ctx = graph_context(
        doc,
        offline({}, declared=(CAPABILITY,)),
        store=DictStore(),
        writer=writer,
        discovery_backend="kubernetes",
        programs=Registry((toy_program(Raising(error)),)),
    )
    return anyio.run(run_graph, ctx)


@pytest.mark.parametrize(
    ("error", "message", "refused_", "conflict"),
    [
        (refused("ToySet", "ns", "g", owner=OWNER), "refusing to reconcile ToySet g", True, False),
        (RenderError("cannot render x"), "cannot render x", False, False),
        (SsaError("ToySet/ns/g", "boom"), "ToySet/ns/g: boom", False, False),
        (
            PreconditionError("ToySet/ns/g", "moved", code=409, reason="Conflict"),
            "ToySet/ns/g: moved",
            False,
            True,
        ),
    ],
)
def test_each_error_becomes_ready_false_with_its_text(error, message, refused_, conflict):
    result = run(error)
    ready = status.find(result.status.get("conditions"), status.READY) or {}
    assert ready["status"] == "False"
    assert ready["reason"] == status.RECONCILE_FAILED
    assert str(ready["message"]).startswith(message)
    assert (result.retry, result.refused, result.conflict) == (True, refused_, conflict)
    assert result.status["routing"]["pathway"] == "Toy"


def test_any_other_exception_is_a_bug_and_propagates():
    with pytest.raises(ZeroDivisionError):
        run(ZeroDivisionError("bug"))
