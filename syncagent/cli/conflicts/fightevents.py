"""Field fights of a graph, read back from the agent's ``FieldFight`` Events.

The fight detector lives in the agent's memory; what it declared reaches the CLI only through
the Warning Events it writes on the graph (``programs/fights.py``), each carrying its details in
an annotation. Events expire (the API server keeps them an hour by default), so this lists the
fights of about the last hour.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
import orjson

from syncagent.kube.kinds import EVENT
from syncagent.kube.objects import Body
from syncagent.programs.fights import ANNOTATION, REASON
from syncagent.rest.request import build
from syncagent.rest.transport import call
from syncagent.ssa.fights import format_duration


@dataclass(frozen=True, slots=True)
class FightRow:
    """One ``FieldFight`` Event: the object, the other manager, the paths and the backoff."""

    subject: str
    manager: str
    other: str
    paths: tuple[str, ...]
    backoff: float
    extended: bool
    count: int
    last_seen: str
    message: str

    @property
    def backoff_text(self) -> str:
        return format_duration(self.backoff) if self.backoff else "?"


async def read_fights(client: httpx2.AsyncClient, graph: Mapping[str, Any]) -> list[FightRow]:
    """The ``FieldFight`` Events on this graph (this incarnation: its UID), newest last."""
    meta = Body(graph).meta
    selector = ",".join(
        (
            f"involvedObject.kind={graph.get('kind')}",
            f"involvedObject.name={meta.name}",
            f"involvedObject.uid={meta.uid}",
            f"reason={REASON}",
        )
    )
    request = build(EVENT, "list", namespace=meta.namespace, params={"fieldSelector": selector})
    listed = await call(client, request)
    return rows(listed.get("items") or ())


def rows(events: Iterable[Mapping[str, Any]]) -> list[FightRow]:
    out = [_row(e) for e in events if e.get("reason") == REASON]
    return sorted(out, key=lambda r: (r.last_seen, r.subject, r.other))


def _row(event: Mapping[str, Any]) -> FightRow:
    notes = Body(event).meta.annotations
    try:
        doc = orjson.loads(notes.get(ANNOTATION) or "{}")
    except orjson.JSONDecodeError:
        doc = {}
    return FightRow(
        subject=str(doc.get("object") or "?"),
        manager=str(doc.get("manager") or "?"),
        other=str(doc.get("other") or "?"),
        paths=tuple(str(p) for p in doc.get("paths") or ()),
        backoff=float(doc.get("backoffSeconds") or 0.0),
        extended=bool(doc.get("extended")),
        count=int(event.get("count") or 1),
        last_seen=str(event.get("lastTimestamp") or event.get("eventTime") or ""),
        message=str(event.get("message") or ""),
    )


def to_text(found: list[FightRow]) -> list[str]:
    """Lines of the fights section of ``syncagent conflicts`` (empty when there is none)."""
    if not found:
        return []
    head = ("OBJECT", "PATHS", "OTHER MANAGER", "OUR MANAGER", "BACKOFF", "COUNT", "LAST SEEN")
    cells = [
        (
            r.subject,
            ",".join(r.paths),
            r.other,
            r.manager,
            r.backoff_text + (" (again)" if r.extended else ""),
            str(r.count),
            r.last_seen,
        )
        for r in found
    ]
    widths = [max(len(head[i]), *(len(c[i]) for c in cells)) for i in range(len(head))]
    lines = ["Field fights (FieldFight events; the agent leaves these fields alone for a while):"]
    lines.append("  ".join(f"{v:<{widths[i]}}" for i, v in enumerate(head)).rstrip())
    lines += ["  ".join(f"{v:<{widths[i]}}" for i, v in enumerate(c)).rstrip() for c in cells]
    lines += [f"{n}. {r.message}" for n, r in enumerate(found, 1)]
    lines.append(
        "Remedy: leave these fields out of the graph (the other writer owns them), or stop the "
        "other writer; meanwhile the agent yields them and retries after each backoff."
    )
    return lines


def to_json(found: list[FightRow]) -> list[dict[str, Any]]:
    return [
        {
            "object": r.subject,
            "paths": list(r.paths),
            "manager": r.other,
            "ourManager": r.manager,
            "backoffSeconds": r.backoff,
            "extended": r.extended,
            "count": r.count,
            "lastSeen": r.last_seen,
            "message": r.message,
        }
        for r in found
    ]
