"""Authentication and authorization of ``/metrics`` through the API server, as
controller-runtime's ``filters.WithAuthenticationAndAuthorization`` does.

A request must carry ``Authorization: Bearer <token>``. A ``TokenReview`` says who the token
belongs to (no token, or one the server does not accept: 401), then a ``SubjectAccessReview``
asks whether that user may ``get`` the non-resource URL requested, e.g. ``/metrics`` (no: 403).
The agent's ServiceAccount needs ``create`` on ``tokenreviews`` and ``subjectaccessreviews``
(the chart grants both when ``metrics.secure`` is on). Answers are remembered for a short
while, bounded in number, so a scraper every few seconds costs no review each time and a flood
of made-up tokens cannot grow the agent's memory.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from lightkube import AsyncClient

from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call
from syncagent.runtime.http import Response

log = logging.getLogger(__name__)

ALLOWED_TTL = 60.0
DENIED_TTL = 10.0
MAX_REMEMBERED = 256

Post = Callable[[Resource, dict[str, Any]], Awaitable[dict[str, Any]]]
TOKEN_REVIEW = Resource.of(
    "authentication.k8s.io/v1", "TokenReview", "tokenreviews", namespaced=False
)
SUBJECT_ACCESS_REVIEW = Resource.of(
    "authorization.k8s.io/v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False
)


def api_post(client: AsyncClient) -> Post:
    async def post(resource: Resource, body: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = await call(client, build(resource, "create", body=body))
        return created

    return post


class ReviewAuthorizer:
    """An ``http.Authorize`` hook: None when the request may be served, else the refusal."""

    def __init__(self, post: Post, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._post = post
        self._clock = clock
        self._remembered: OrderedDict[tuple[str, str], tuple[float, Response | None]] = (
            OrderedDict()
        )

    async def __call__(self, path: str, headers: dict[str, str]) -> Response | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return Response(401, "Unauthorized: send a ServiceAccount token as 'Bearer'\n")
        key = (hashlib.sha256(token.strip().encode()).hexdigest(), path)
        now = self._clock()
        hit = self._remembered.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        try:
            verdict = await self._review(token.strip(), path)
        except Exception as err:
            log.warning("metrics: review failed", extra={"path": path, "error": str(err)})
            return Response(500, "Internal Server Error: could not review the request\n")
        self._remember(key, now + (ALLOWED_TTL if verdict is None else DENIED_TTL), verdict)
        return verdict

    def _remember(self, key: tuple[str, str], until: float, verdict: Response | None) -> None:
        self._remembered[key] = (until, verdict)
        self._remembered.move_to_end(key)
        while len(self._remembered) > MAX_REMEMBERED:
            self._remembered.popitem(last=False)

    async def _review(self, token: str, path: str) -> Response | None:
        review = await self._post(
            TOKEN_REVIEW,
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            },
        )
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return Response(401, "Unauthorized: the API server does not accept this token\n")
        user = status.get("user") or {}
        access = await self._post(
            SUBJECT_ACCESS_REVIEW,
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {
                    "user": user.get("username", ""),
                    "uid": user.get("uid", ""),
                    "groups": user.get("groups") or [],
                    "extra": user.get("extra") or {},
                    "nonResourceAttributes": {"path": path, "verb": "get"},
                },
            },
        )
        if not (access.get("status") or {}).get("allowed"):
            name = user.get("username", "")
            return Response(403, f"Forbidden: {name} may not get {path}\n")
        return None
