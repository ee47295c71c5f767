"""Authentication and authorization of ``/metrics`` through the API server, as
controller-runtime's ``filters.WithAuthenticationAndAuthorization`` does.

A request must carry ``Authorization: Bearer <token>``. A ``TokenReview`` says who the token
belongs to (no token, or one the server does not accept: 401), then a ``SubjectAccessReview``
asks whether that user may ``get`` the non-resource URL requested, e.g. ``/metrics`` (no: 403).
The agent's ServiceAccount needs ``create`` on ``tokenreviews`` and ``subjectaccessreviews``
(the chart grants both when ``metrics.secure`` is on).

The check runs before routing (``http.guarded``): a refused request never reaches a route.
Only a grant is remembered, for ``ALLOWED_TTL`` and at most ``MAX_REMEMBERED`` of them, so a
scraper every few seconds costs no review each time, and a flood of made-up tokens can neither
grow the agent's memory nor push a real scraper's grant out. A token not remembered is reviewed
with at most ``REVIEWS_AT_ONCE`` reviews in flight, so such a flood costs the API server no more
than that many concurrent reviews (the rest wait, bounded by the scraper's own timeout).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from httpx2 import AsyncClient

from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call
from syncagent.runtime.http import Response

log = logging.getLogger(__name__)

ALLOWED_TTL = 60.0
MAX_REMEMBERED = 256
REVIEWS_AT_ONCE = 4

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
        # (token digest, path) -> until when the grant holds
        self._remembered: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._reviews = anyio.CapacityLimiter(REVIEWS_AT_ONCE)

    async def __call__(self, path: str, headers: dict[str, str]) -> Response | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return Response(401, "Unauthorized: send a ServiceAccount token as 'Bearer'\n")
        key = (hashlib.sha256(token.strip().encode()).hexdigest(), path)
        now = self._clock()
        if self._remembered.get(key, now) > now:
            return None
        try:
            async with self._reviews:
                verdict = await self._review(token.strip(), path)
        except Exception as err:
            log.warning("metrics: review failed", extra={"path": path, "error": str(err)})
            return Response(500, "Internal Server Error: could not review the request\n")
        if verdict is None:
            self._remember(key, now + ALLOWED_TTL)
        return verdict

    def _remember(self, key: tuple[str, str], until: float) -> None:
        self._remembered[key] = until
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
