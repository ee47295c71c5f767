"""The Kubernetes client: one lightkube ``AsyncClient`` per process, plus raw JSON requests.

lightkube 1.x has no API for discovery documents, watch bookmarks or dict bodies with exact
timestamp formats; :func:`http_client` is the one place that reaches inside it for the
underlying httpx2 client, which already carries the server URL, TLS and credentials.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import orjson
import yaml
from lightkube import AsyncClient, KubeConfig, SingleConfig
from lightkube.core.exceptions import ApiError, ConfigError

from syncagent.runtime import stages
from syncagent.runtime.metrics import Metrics, default_metrics
from syncagent.runtime.retry import RetryPolicy, install

USER_AGENT = "syncagent"


class ClientConfigError(Exception):
    """No usable kubeconfig or in-cluster configuration."""


def load_config(
    *, kubeconfig: str | os.PathLike[str] | None = None, context: str | None = None
) -> SingleConfig:
    """The connection config: ``kubeconfig`` if given, else in-cluster, else the ``KUBECONFIG``
    variable or ``~/.kube/config``; ``context`` picks a context (default: the current one)."""
    where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    try:
        config = KubeConfig.from_file(kubeconfig) if kubeconfig else KubeConfig.from_env()
        single = config.get(context_name=context)
    except (ConfigError, OSError, KeyError, ValueError, AttributeError, TypeError) as err:
        # lightkube reports a file that is not a kubeconfig as a bare KeyError ('clusters')
        # or AttributeError; name what is wrong with it instead.
        problem = _kubeconfig_problem(kubeconfig) if kubeconfig else None
        raise ClientConfigError(
            f"kubeconfig {where}: {problem or err}; pass --kubeconfig FILE (and --context NAME) "
            "or run inside a cluster"
        ) from err
    assert single is not None  # get() raises rather than return None without a default
    return single


def _kubeconfig_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a kubeconfig, when that is the trouble (None: something else)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None
    if data is None:
        return "the file is empty, not a kubeconfig"
    if not isinstance(data, dict):
        return f"not a kubeconfig (a {type(data).__name__}, not a mapping)"
    missing = [k for k in ("clusters", "contexts", "users") if not isinstance(data.get(k), list)]
    if missing:
        return f"not a kubeconfig (no {', '.join(missing)} list)"
    return None


def make_client(
    *,
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    namespace: str | None = None,
    timeout: float = 30.0,
    metrics: Metrics | None = None,
    retry: RetryPolicy | None = None,
) -> AsyncClient:
    """A lightkube ``AsyncClient``; every request it sends is counted in ``metrics``, and
    transient failures are retried per request (``syncagent.runtime.retry``)."""
    config = load_config(kubeconfig=kubeconfig, context=context)
    client = AsyncClient(config, namespace=namespace, timeout=httpx2.Timeout(timeout))
    http = http_client(client)
    http.headers["User-Agent"] = USER_AGENT
    metrics = metrics or default_metrics()
    install(http, policy=retry, metrics=metrics)
    stages.install(http)  # outside the retries: a reconcile waits for them too
    instrument(client, metrics=metrics)
    return client


def http_client(client: AsyncClient) -> httpx2.AsyncClient:
    """The httpx2 client inside lightkube's ``AsyncClient`` (base URL, TLS, auth set)."""
    return client._client._client


def request_verb(method: str, path: str, params: Mapping[str, list[str]]) -> str:
    """The Kubernetes verb of a request, as the API server's audit log names it."""
    method = method.upper()
    if method == "GET":
        if params.get("watch", ["false"])[0] in ("true", "1"):
            return "watch"
        # Collections have an even number of segments after the group/version prefix.
        return "list" if _is_collection(path) else "get"
    if method == "PATCH":
        return "patch"
    return {"POST": "create", "PUT": "update", "DELETE": "delete"}.get(method, method.lower())


def _split_resource(path: str) -> tuple[str, list[str]]:
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"]:
        rest = parts[3:]
    else:
        return "", []
    if len(rest) >= 2 and rest[0] == "namespaces":
        rest = rest[2:] if len(rest) > 2 else ["namespaces", rest[1]]
    return (rest[0] if rest else ""), rest


def _is_collection(path: str) -> bool:
    _, rest = _split_resource(path)
    return len(rest) == 1


def request_resource(path: str) -> str:
    """The resource (plural, with ``/subresource``) a request path addresses; "" for discovery."""
    resource, rest = _split_resource(path)
    if len(rest) == 3:
        return f"{resource}/{rest[2]}"
    return resource


def instrument(client: AsyncClient, *, metrics: Metrics) -> None:
    """Count every response in ``syncagent_api_requests_total``."""

    async def on_response(response: httpx2.Response) -> None:
        request = response.request
        url = urlsplit(str(request.url))
        params = parse_qs(url.query)
        metrics.api_requests.inc(
            verb=request_verb(request.method, url.path, params),
            resource=request_resource(url.path),
            dry_run="true" if "dryRun" in params else "false",
            code=str(response.status_code),
        )

    http = http_client(client)
    http.event_hooks = {
        "request": http.event_hooks.get("request", []),
        "response": [*http.event_hooks.get("response", []), on_response],
    }


async def request_json(
    client: AsyncClient,
    method: str,
    path: str,
    *,
    params: Mapping[str, str] | None = None,
    body: Any = None,
    content_type: str = "application/json",
    request_timeout: float | None = None,
) -> Any:
    """One JSON request relative to the server URL; raises lightkube ``ApiError`` on 4xx/5xx."""
    http = http_client(client)
    headers = {"Accept": "application/json"}
    content = None
    if body is not None:
        content = orjson.dumps(body)
        headers["Content-Type"] = content_type
    response = await http.request(
        method,
        path.lstrip("/"),
        params=dict(params or {}),
        content=content,
        headers=headers,
        timeout=httpx2.USE_CLIENT_DEFAULT if request_timeout is None else request_timeout,
    )
    raise_for_status(response)
    return orjson.loads(response.content) if response.content else None


def raise_for_status(response: httpx2.Response) -> None:
    if response.is_success:
        return
    if response.headers.get("Content-Type", "").startswith("application/json"):
        raise ApiError(request=response.request, response=response)
    response.raise_for_status()


def status_code(err: BaseException) -> int | None:
    """The HTTP status of an API error, or ``None`` for transport errors."""
    if isinstance(err, ApiError):
        return err.status.code
    if isinstance(err, httpx2.HTTPStatusError):
        return err.response.status_code
    return None
