"""The ownership history as an aggregated API (docs/ownership.md §6, docs/security.md §9).

The chart registers APIService ``v1alpha1.history.syncagent.io``; the API server authenticates
the caller, checks that it may ``get`` (or ``list``) ``ownershiphistories`` there, and forwards
the request to the agent with the caller in front-proxy headers (``runtime/frontproxy.py``
vouches for them). The agent then asks a SubjectAccessReview whether the caller may ``get`` the
object whose history is asked (``historyaccess.py``): no, 403.

- ``GET /apis/history.syncagent.io/v1alpha1/namespaces/NS/ownershiphistories/NAME?group=G&kind=K``
  (without ``namespaces/NS`` for a cluster-scoped object): one object's kept transitions and the
  instant since which the history is complete.
- ``GET .../namespaces/NS/ownershiphistories`` (or ``.../ownershiphistories``, every namespace):
  the objects with a history kept, only those the caller may get.
- ``/apis``, ``/apis/history.syncagent.io`` and ``.../v1alpha1``: discovery, for the API server's
  availability probe and its discovery document (no caller needed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

import anyio
import anyio.abc
import orjson
from httpx2 import AsyncClient

from syncagent.controller.history import HistoryRecorder
from syncagent.controller.historyaccess import Access, Target
from syncagent.kube.kinds import CONFIG_MAP
from syncagent.rest.request import build
from syncagent.rest.transport import call
from syncagent.runtime import frontproxy, http
from syncagent.runtime.frontproxy import Caller, Trust, caller
from syncagent.runtime.http import Receive, Response, Scope, Send, send_response
from syncagent.runtime.metricsauth import api_post
from syncagent.runtime.servingcert import ServingCert
from syncagent.ssa.historylog import ObjectKey

log = logging.getLogger(__name__)

GROUP = "history.syncagent.io"
VERSION = "v1alpha1"
RESOURCE = "ownershiphistories"
KIND = "OwnershipHistory"
API_VERSION = f"{GROUP}/{VERSION}"
BASE = f"/apis/{API_VERSION}"
JSON = "application/json"


def _json(code: int, doc: Mapping[str, Any]) -> Response:
    return Response(code, orjson.dumps(doc).decode(), JSON)


def status(code: int, reason: str, message: str) -> Response:
    """A ``Status`` document, as the API server words a refusal (kubectl prints its message)."""
    doc = {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
    return _json(code, {**doc, "code": code, "reason": reason, "message": message})


def _group_doc() -> dict[str, Any]:
    version = {"groupVersion": API_VERSION, "version": VERSION}
    return {"name": GROUP, "versions": [version], "preferredVersion": version}


def discovery(path: str) -> Response | None:
    """The discovery documents (None: ``path`` is not one)."""
    if path == "/apis":
        return _json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group_doc()]})
    if path == f"/apis/{GROUP}":
        return _json(200, {"kind": "APIGroup", "apiVersion": "v1", **_group_doc()})
    if path == BASE:
        resource = {
            "name": RESOURCE,
            "singularName": "ownershiphistory",
            "namespaced": True,
            "kind": KIND,
            "verbs": ["get", "list"],
        }
        doc = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": API_VERSION}
        return _json(200, {**doc, "resources": [resource]})
    return None


def parse(path: str) -> tuple[str, str] | None:
    """``(namespace, name)`` of a history path (name "" for a list; None: not one)."""
    rest = path.removeprefix(BASE + "/").strip("/").split("/")
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[1]:
        namespace, rest = rest[1], rest[2:]
    if not path.startswith(BASE + "/") or not rest or rest[0] != RESOURCE or len(rest) > 2:
        return None
    return namespace, rest[1] if len(rest) == 2 else ""


def subject(key: ObjectKey) -> str:
    _group, kind, namespace, name = key
    return "/".join(p for p in (kind, namespace, name) if p)


class HistoryApi:
    """The ASGI app of the history port (behind the front proxy's TLS context)."""

    def __init__(
        self, recorder: HistoryRecorder, access: Access, *, trust: Callable[[], Trust]
    ) -> None:
        self.recorder = recorder
        self.access = access
        self._trust = trust  # the front proxy's, as its ConfigMap says now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        try:
            response = await self.answer(scope)
        except Exception as err:
            log.exception("history: request failed", extra={"path": scope["path"]})
            response = status(500, "InternalError", f"the history request failed: {err}")
        await send_response(send, response)

    async def answer(self, scope: Scope) -> Response:
        path = scope["path"].rstrip("/")
        if scope["method"] not in ("GET", "HEAD"):
            return status(405, "MethodNotAllowed", f"{path}: the history is read-only (GET)")
        found = discovery(path)
        if found is not None:
            return found
        where = parse(path)
        if where is None:
            return status(404, "NotFound", f"{path}: not found; try {BASE}/{RESOURCE}")
        who = caller(scope["headers"], self._trust())
        if who is None:
            return status(401, "Unauthorized", "the front proxy named no user")
        query = dict(parse_qsl(scope["query_string"].decode("latin-1")))
        namespace, name = where
        if not name:
            return await self._list(who, namespace)
        return await self._one(
            who, (query.get("group", ""), query.get("kind", ""), namespace, name)
        )

    async def _one(self, who: Caller, key: ObjectKey) -> Response:
        if not key[1]:
            return status(
                400, "BadRequest", f"{subject(key)}: give the object's kind (?kind=K&group=G)"
            )
        resource = self.recorder.resources.get((key[0], key[1]))
        if resource is None:
            known = ", ".join(sorted(f"{k}.{g}" if g else k for g, k in self.recorder.resources))
            msg = f"{subject(key)}: the agent records no history of this kind; it records {known}"
            return status(404, "NotFound", msg)
        target = Target(key[0], resource.plural, key[2], key[3])
        if not await self.access.may_get(who, target):
            where = f"in namespace {key[2]}" if key[2] else "cluster-wide"
            msg = f"{subject(key)}: {who.user} may not get {resource.plural} {key[3]!r} {where}"
            return status(403, "Forbidden", f"{msg}; its history is shown only to who may get it")
        return _json(200, self._document(key))

    def _document(self, key: ObjectKey) -> dict[str, Any]:
        kept = self.recorder.log.get(key)
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": key[3], **({"namespace": key[2]} if key[2] else {})},
            "object": {"group": key[0], "kind": key[1], "uid": kept.uid if kept else ""},
            "start": self.recorder.log.start,
            "completeSince": self.recorder.log.complete_since,
            "transitions": list(kept.transitions) if kept else [],
        }

    async def _list(self, who: Caller, namespace: str) -> Response:
        keys = [k for k in self.recorder.log.kept() if not namespace or k[2] == namespace]
        shown = [k for k in keys if await self._may_get(who, k)]
        items = [_item(k) for k in sorted(shown)]
        return _json(200, {"apiVersion": API_VERSION, "kind": f"{KIND}List", "items": items})

    async def _may_get(self, who: Caller, key: ObjectKey) -> bool:
        resource = self.recorder.resources.get((key[0], key[1]))
        if resource is None:
            return False
        # One review covers every object of the resource there; else one per object.
        every = Target(key[0], resource.plural, key[2], "")
        if await self.access.may_get(who, every):
            return True
        return await self.access.may_get(who, Target(key[0], resource.plural, key[2], key[3]))


def _item(key: ObjectKey) -> dict[str, Any]:
    meta = {"name": key[3], **({"namespace": key[2]} if key[2] else {})}
    return {"metadata": meta, "object": {"group": key[0], "kind": key[1]}}


async def serve(
    client: AsyncClient,
    recorder: HistoryRecorder,
    *,
    address: str,
    cert_dir: str | None,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the history API at ``address`` over TLS, to the front proxy only, until cancelled."""
    context = frontproxy.FrontProxyContext()
    cert = ServingCert(cert_dir, context=context, what="history")

    async def read() -> dict[str, str]:
        request = build(
            CONFIG_MAP, "get", namespace=frontproxy.NAMESPACE, name=frontproxy.CONFIGMAP
        )
        found: dict[str, Any] = await call(client, request)
        return dict(found.get("data") or {})

    api = HistoryApi(recorder, Access(api_post(client)), trust=lambda: context.trust)
    server = http.Server(address, {}, what="history", tls=context, app=api)
    async with anyio.create_task_group() as tg:
        # Listening first: a taken port is reported before anything is asked of the API server;
        # until the trust is read, no handshake completes (no CA yet).
        task_status.started(await tg.start(http.serve_endpoint, server))
        await frontproxy.refresh(context, read)
        tg.start_soon(frontproxy.follow, context, read)
        tg.start_soon(cert.follow)
