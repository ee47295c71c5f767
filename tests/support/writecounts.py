"""Counting what a migration wrote, from :class:`tests.support.apiproxy.ApiProxy`'s record
(no tests here): the graph's status writes and what each reported, and the writes to the shared
model Services, refused or not (the cluster and chaos tiers)."""

from __future__ import annotations

from typing import Any

import orjson

from tests.support.apiproxy import Write

MODEL_SERVICES = "/services/dynamo-model-"


def status_writes(writes: list[Write], graph: str) -> list[Write]:
    """The graph's status writes the server accepted."""
    suffix = f"/dynamographdeployments/{graph}/status"
    return [w for w in writes if w.path.endswith(suffix) and w.status < 300]


def reported(write: Write) -> tuple[Any, ...]:
    """What a graph status write reports: state, generation, routing, and each condition's
    status and reason (messages, replica counts and workload names are progress)."""
    st = orjson.loads(write.body)["status"]
    conditions = tuple((c["type"], c["status"], c["reason"]) for c in st.get("conditions") or ())
    return st.get("state"), st.get("observedGeneration"), str(st.get("routing")), conditions


def repeats(writes: list[Write], graph: str) -> list[int]:
    """Positions (among the graph's status writes) of the writes that reported what the one
    before had reported."""
    reports = [reported(w) for w in status_writes(writes, graph)]
    return [i for i in range(1, len(reports)) if reports[i] == reports[i - 1]]


def model_service_writes(writes: list[Write]) -> list[Write]:
    return [w for w in writes if MODEL_SERVICES in w.path]


def summary(writes: list[Write], graph: str) -> str:
    statuses = status_writes(writes, graph)
    models = model_service_writes(writes)
    refused = [w for w in models if w.status == 409]
    return (
        f"{len(writes)} writes: graph status {len(statuses)} "
        f"({len(repeats(writes, graph))} reporting what the one before did), "
        f"model Service {len(models)} ({len(refused)} refused)"
    )
