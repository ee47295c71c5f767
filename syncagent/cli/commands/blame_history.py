"""``syncagent blame KIND/NAME --history``: the object's owners over time, from the agent.

The live object comes from the API server with the caller's rights; the transitions from the
agent's history port through the API server's service proxy
(``/api/v1/namespaces/NS/services/NAME:PORT/proxy/history``), so no port-forward is needed and
RBAC on ``services/proxy`` decides who may read it (docs/security.md).
"""

from __future__ import annotations

import argparse
from typing import Any

import httpx2
import orjson
from httpx2 import AsyncClient

from syncagent.cli.blame import AGENT_SERVICE
from syncagent.cli.errors import UserError
from syncagent.cli.flags import connection
from syncagent.inspect import history
from syncagent.inspect.kinds import UnknownKindError, split_target
from syncagent.inspect.live import ReadError, read_target
from syncagent.inspect.session import InspectError, default_namespace, run_async
from syncagent.kube.kinds import SERVICE
from syncagent.rest.request import build
from syncagent.rest.transport import send


def run(args: argparse.Namespace) -> int:
    if args.filename:
        raise UserError(
            "blame --history: give KIND/NAME without -f; the history is the running agent's"
        )
    service = _service(args.agent_service)
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
        served = await fetch(client, service, obj, subject=subject)
        return history.report(subject, obj, served)

    try:
        found = run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
    print(history.to_json(found) if args.output == "json" else history.to_text(found), end="")
    return 0


def _service(text: str) -> tuple[str, str, str]:
    """``NS/NAME[:PORT]`` -> (namespace, name, port); the port defaults to ``history``."""
    namespace, sep, rest = text.partition("/")
    name, _, port = rest.partition(":")
    if not sep or not namespace or not name or "/" in rest:
        raise UserError(f"--agent-service {text}: expected NS/NAME[:PORT], e.g. {AGENT_SERVICE}")
    return namespace, name, port or "history"


async def fetch(
    client: AsyncClient, service: tuple[str, str, str], obj: dict[str, Any], *, subject: str
) -> dict[str, Any]:
    """The agent's ``/history`` answer for ``obj``, through the service proxy."""
    ns, name, port = service
    where = f"Service/{ns}/{name}"
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    meta = obj.get("metadata") or {}
    params = {"group": group, "kind": str(obj.get("kind")), "name": str(meta.get("name"))}
    params["namespace"] = str(meta.get("namespace") or "")
    # The API server's service proxy: /api/v1/namespaces/NS/services/NAME:PORT/proxy/history.
    request = build(
        SERVICE,
        "get",
        namespace=ns,
        name=f"{name}:{port}",
        subresource="proxy/history",
        params=params,
    )
    try:
        response = await send(client, request)
    except httpx2.TransportError as err:
        raise InspectError(f"{subject}: {where}: the history request failed: {err}") from None
    if response.status_code == 200:
        try:
            doc: dict[str, Any] = orjson.loads(response.content)
            return doc
        except orjson.JSONDecodeError:
            pass
    raise InspectError(f"{subject}: {where}: {_refusal(response, port)}")


def _refusal(response: httpx2.Response, port: str) -> str:
    """Why the proxy or the agent refused, and what to do."""
    try:
        message = str(orjson.loads(response.content).get("message") or "")
    except (orjson.JSONDecodeError, AttributeError):
        message = response.text.strip()[:200]
    code = response.status_code
    if code == 403:
        return (
            f"HTTP 403 {message}; reading the history needs get on services/proxy for this "
            "Service (bind the chart's ClusterRole <release>-syncagent-history-reader)"
        )
    if code == 404 and "services" in message:
        return (
            f"HTTP 404 {message}; is the agent installed there with its history on? Pass "
            "--agent-service NS/NAME[:PORT]"
        )
    if code in (502, 503):
        return (
            f"HTTP {code} {message}; no agent answers on port {port}: check that its pod is "
            "ready and runs with --history-bind-address"
        )
    return f"HTTP {code} {message or 'not a history answer'}"
