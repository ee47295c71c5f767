"""Count API requests by verb, dry-run vs real, so tests and benchmarks can read them.

The counter hooks the HTTP client itself (an httpx2 request event hook), so it sees every
request made through that client: the engine's, and any other code sharing the client.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import httpx2

from syncagent.rest.request import addressed

# Verbs that change state; everything else is a read.
WRITE_VERBS = frozenset({"create", "update", "patch", "apply", "delete", "deletecollection"})


@dataclass(frozen=True, slots=True)
class RequestKey:
    verb: str
    dry_run: bool


@dataclass
class RequestCounter:
    """Requests seen, keyed by (verb, dry_run). Verbs: get, list, watch, discovery, create,
    update, patch, apply (a patch of type apply), delete, deletecollection."""

    counts: Counter[RequestKey] = field(default_factory=Counter)

    def record(self, request: httpx2.Request) -> None:
        self.counts[classify(request)] += 1

    async def hook(self, request: httpx2.Request) -> None:
        self.record(request)

    def attach(self, client: httpx2.AsyncClient) -> RequestCounter:
        """Count every request of ``client``."""
        hooks = client.event_hooks
        if self.hook not in hooks["request"]:
            hooks["request"].append(self.hook)
            client.event_hooks = hooks
        return self

    def count(self, verb: str | None = None, *, dry_run: bool | None = None) -> int:
        return sum(
            n
            for key, n in self.counts.items()
            if (verb is None or key.verb == verb) and (dry_run is None or key.dry_run == dry_run)
        )

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def writes(self) -> int:
        """Real (not dry-run) requests that change state."""
        return sum(n for k, n in self.counts.items() if k.verb in WRITE_VERBS and not k.dry_run)

    def by_verb(self) -> dict[str, int]:
        """Counts keyed ``verb`` or ``verb(dry-run)``, sorted, for printing."""
        out: dict[str, int] = {}
        for key, n in sorted(self.counts.items(), key=lambda kv: (kv[0].verb, kv[0].dry_run)):
            out[key.verb + ("(dry-run)" if key.dry_run else "")] = n
        return out

    def snapshot(self) -> Counter[RequestKey]:
        return Counter(self.counts)

    def since(self, snapshot: Counter[RequestKey]) -> RequestCounter:
        """The requests made after ``snapshot`` was taken."""
        return RequestCounter(self.counts - snapshot)

    def reset(self) -> None:
        self.counts.clear()


def classify(request: httpx2.Request) -> RequestKey:
    params = parse_qs(request.url.query.decode())
    dry_run = "All" in params.get("dryRun", [])
    return RequestKey(_verb(request, params), dry_run)


def _verb(request: httpx2.Request, params: dict[str, list[str]]) -> str:
    method = request.method.upper()
    target = addressed(request.url.path)
    if not target.plural:
        return "discovery" if method == "GET" else method.lower()
    item = bool(target.name)
    if method == "GET":
        if params.get("watch", [""])[0] in ("true", "1"):
            return "watch"
        return "get" if item else "list"
    if method == "PATCH":
        content_type = request.headers.get("content-type", "")
        return "apply" if content_type.startswith("application/apply-patch") else "patch"
    return {
        "POST": "create",
        "PUT": "update",
        "DELETE": "delete" if item else "deletecollection",
    }.get(method, method.lower())
