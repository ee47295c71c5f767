"""The one place a request goes out: over the process's httpx2 ``AsyncClient``, which the agent
builds itself (``runtime/client.py``: server URL, TLS, credentials, retries and metrics already
set on it).

lightkube 1.x has no API for discovery documents, watch bookmarks or raw JSON bodies compared
field by field, so the agent builds its requests (``request.py``) and sends them here.
:func:`send` returns the response for callers that read a 404 or a refusal themselves
(:func:`status_of` gives its Status); :func:`call` maps every error status to an exception (:func:`call_or_none` all but a 404):
lightkube's ``ApiError`` for a Kubernetes Status, ``httpx2.HTTPStatusError`` otherwise.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import orjson
from lightkube.core.exceptions import ApiError

from syncagent.rest.request import Request

Timeout = float | httpx2.Timeout | None


def _timeout(timeout: Timeout) -> Any:
    return httpx2.USE_CLIENT_DEFAULT if timeout is None else timeout


async def send(
    client: httpx2.AsyncClient, request: Request, *, request_timeout: Timeout = None
) -> httpx2.Response:
    """Send ``request``; the response whatever its status (transport errors raise)."""
    return await client.request(
        request.method,
        request.path,
        params=dict(request.params),
        headers=dict(request.headers),
        content=request.content,
        timeout=_timeout(request_timeout),
    )


async def call(
    client: httpx2.AsyncClient, request: Request, *, request_timeout: Timeout = None
) -> Any:
    """Send ``request`` and decode its JSON answer; an error status raises (module doc)."""
    response = await send(client, request, request_timeout=request_timeout)
    raise_for_status(response)
    return orjson.loads(response.content) if response.content else None


async def call_or_none(
    client: httpx2.AsyncClient, request: Request, *, request_timeout: Timeout = None
) -> Any:
    """:func:`call`, but a 404 (no such object, or a group-version not served) reads as None."""
    response = await send(client, request, request_timeout=request_timeout)
    if response.status_code == 404:
        return None
    raise_for_status(response)
    return orjson.loads(response.content) if response.content else None


@asynccontextmanager
async def stream(
    client: httpx2.AsyncClient, request: Request, *, request_timeout: Timeout
) -> AsyncIterator[httpx2.Response]:
    """A streamed response (a watch), read line by line by the caller; not yet checked."""
    async with client.stream(
        request.method,
        request.path,
        params=dict(request.params),
        headers=dict(request.headers),
        timeout=_timeout(request_timeout),
    ) as response:
        yield response


def raise_for_status(response: httpx2.Response) -> None:
    if response.is_success:
        return
    if response.headers.get("Content-Type", "").startswith("application/json"):
        raise ApiError(request=response.request, response=response)
    response.raise_for_status()


def status_of(response: httpx2.Response) -> dict[str, Any]:
    """The Kubernetes Status of an error response; ``{"message": <text>}`` when it has none."""
    try:
        status = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return {"message": response.text.strip()}
    return status if isinstance(status, dict) else {"message": response.text.strip()}


def status_code(err: BaseException) -> int | None:
    """The HTTP status of an API error, or ``None`` for transport errors."""
    if isinstance(err, ApiError):
        return err.status.code
    if isinstance(err, httpx2.HTTPStatusError):
        return err.response.status_code
    return None
