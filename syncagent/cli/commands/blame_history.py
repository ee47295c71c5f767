"""``syncagent blame KIND/NAME --history``: the object's owners over time, from the agent.

The live object and its history both come from the API server with the caller's credentials:
the history through the aggregated API the agent serves
(``/apis/history.syncagent.io/v1alpha1/namespaces/NS/ownershiphistories/NAME?group=G&kind=K``),
where the API server authenticates the caller and the agent answers only if the caller may get
the object (docs/security.md §9).
"""

from __future__ import annotations

import argparse
from typing import Any

import httpx2
import orjson
from httpx2 import AsyncClient

from syncagent.cli.errors import UserError
from syncagent.cli.flags import connection
from syncagent.inspect import history
from syncagent.inspect.kinds import UnknownKindError, split_target
from syncagent.inspect.live import ReadError, read_target
from syncagent.inspect.session import InspectError, default_namespace, run_async
from syncagent.rest.request import Request
from syncagent.rest.transport import send

API = "/apis/history.syncagent.io/v1alpha1"
APISERVICE = "v1alpha1.history.syncagent.io"


def run(args: argparse.Namespace) -> int:
    if args.filename:
        raise UserError(
            "blame --history: give KIND/NAME without -f; the history is the running agent's"
        )
    try:
        kind, name = split_target(args.target)
    except UnknownKindError as err:
        raise UserError(str(err)) from None
    namespace = default_namespace(connection(args))

    async def work(client: AsyncClient) -> history.Report:
        try:
            obj = await read_target(client, kind, name, namespace=namespace)
        except (UnknownKindError, ReadError) as err:
            raise InspectError(str(err)) from None
        where = (obj.get("metadata") or {}).get("namespace")
        subject = f"{obj['kind']}/{where}/{name}" if where else f"{obj['kind']}/{name}"
        served = await fetch(client, obj, subject=subject)
        return history.report(subject, obj, served)

    try:
        found = run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
    print(history.to_json(found) if args.output == "json" else history.to_text(found), end="")
    return 0


def path_of(obj: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The aggregated API's path and query for ``obj``'s history."""
    meta = obj.get("metadata") or {}
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    where = f"/namespaces/{meta['namespace']}" if meta.get("namespace") else ""
    path = f"{API}{where}/ownershiphistories/{meta.get('name')}"
    return path, {"group": group, "kind": str(obj.get("kind"))}


async def fetch(client: AsyncClient, obj: dict[str, Any], *, subject: str) -> dict[str, Any]:
    """The agent's history document for ``obj``, through the API server."""
    path, params = path_of(obj)
    try:
        response = await send(client, Request("GET", path, params=params))
    except httpx2.TransportError as err:
        raise InspectError(f"{subject}: the history request failed: {err}") from None
    if response.status_code == 200:
        try:
            doc: dict[str, Any] = orjson.loads(response.content)
            return doc
        except orjson.JSONDecodeError:
            pass
    raise InspectError(f"{subject}: {refusal(response, subject)}")


def _message(response: httpx2.Response) -> str:
    try:
        return str(orjson.loads(response.content).get("message") or "")
    except (orjson.JSONDecodeError, AttributeError):
        return response.text.strip()[:200]


def refusal(response: httpx2.Response, subject: str) -> str:
    """Why the API server or the agent refused, and what to do."""
    message, code = _message(response), response.status_code
    if code == 401:
        return f"HTTP 401 {message}; the API server does not know you: check the kubeconfig's user"
    if code == 403 and "ownershiphistories" in message:
        return (
            f"HTTP 403 {message}; reading the history needs get on "
            "ownershiphistories.history.syncagent.io here (the view ClusterRole has it)"
        )
    if code == 403:
        return f"HTTP 403 {message or f'you may not get {subject}'}"
    if code == 404 and "records no history" not in message:
        return (
            f"HTTP 404 {message}; no APIService {APISERVICE} answers: is the agent installed "
            "with its history on (chart value history.enabled)?"
        )
    if code == 503:
        return (
            f"HTTP 503 {message}; APIService {APISERVICE} is not available: check that the "
            "agent's pod is ready (kubectl get apiservice " + APISERVICE + ")"
        )
    return f"HTTP {code} {message or 'not a history answer'}"
