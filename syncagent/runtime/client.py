"""The Kubernetes client: an httpx2 ``AsyncClient`` the agent builds and owns (one per pool,
``runtime/connections.py``), its retries and its request metrics. Requests go out through
``syncagent.rest`` (built by ``rest.request``, sent by ``rest.transport`` over this client).

lightkube reads the kubeconfig and makes the connection's parameters (server, TLS, credentials:
its public ``client_adapter``); its typed client is not used, so nothing reaches inside it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import yaml
from lightkube import KubeConfig, SingleConfig
from lightkube.config.client_adapter import AsyncClient as adapter_client
from lightkube.config.client_adapter import ConnectionParams, verify_cluster
from lightkube.core.exceptions import ConfigError

from syncagent.rest.request import addressed
from syncagent.runtime import stages
from syncagent.runtime.metrics import Metrics, Registry, default_metrics
from syncagent.runtime.retry import RetryPolicy, install

USER_AGENT = "syncagent"


class RequestMetrics:
    """Every Kubernetes API request the client sends."""

    def __init__(self, r: Registry) -> None:
        self.api_requests = r.counter(
            "syncagent_api_requests_total",
            "Kubernetes API requests by verb, resource, dry run and HTTP status code.",
            ("verb", "resource", "dry_run", "code"),
        )


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
    timeout: float = 30.0,
    metrics: Metrics | None = None,
    retry: RetryPolicy | None = None,
    limits: httpx2.Limits | None = None,
) -> httpx2.AsyncClient:
    """The process's HTTP client to the API server; every request it sends is counted in
    ``metrics``, and transient failures are retried per request (``syncagent.runtime.retry``).
    ``limits``: its connection pool (default httpx2's: 100 connections;
    ``runtime/connections.py``)."""
    config = load_config(kubeconfig=kubeconfig, context=context)
    transport = None if limits is None else _pooled(config, limits)
    http = http_for(config, timeout=httpx2.Timeout(timeout), transport=transport)
    http.headers["User-Agent"] = USER_AGENT
    metrics = metrics or default_metrics()
    install(http, policy=retry, metrics=metrics)
    stages.install(http)  # outside the retries: a reconcile waits for them too
    instrument(http, metrics=metrics)
    return http


def http_for(
    config: SingleConfig,
    *,
    timeout: httpx2.Timeout,
    transport: httpx2.AsyncBaseTransport | None = None,
) -> httpx2.AsyncClient:
    """A bare client for ``config`` (base URL, TLS, credentials as lightkube reads them), with
    neither retries nor metrics: :func:`make_client` adds those."""
    return adapter_client(config, ConnectionParams(timeout=timeout, transport=transport))


def _pooled(config: SingleConfig, limits: httpx2.Limits) -> httpx2.AsyncHTTPTransport:
    """A transport with a pool of ``limits``; lightkube has no pool option, and a transport
    given to it must bring the TLS context lightkube would have made (CA, client cert)."""
    assert config.user is not None  # load_config returns a context with a user
    verify = verify_cluster(config.cluster, config.user, config.abs_file)
    return httpx2.AsyncHTTPTransport(verify=verify, limits=limits)


def request_verb(method: str, path: str, params: Mapping[str, list[str]]) -> str:
    """The Kubernetes verb of a request, as the API server's audit log names it."""
    method = method.upper()
    if method == "GET":
        if params.get("watch", ["false"])[0] in ("true", "1"):
            return "watch"
        target = addressed(path)
        return "list" if target.plural and not target.name else "get"
    if method == "PATCH":
        return "patch"
    return {"POST": "create", "PUT": "update", "DELETE": "delete"}.get(method, method.lower())


def request_resource(path: str) -> str:
    """The resource (plural, with its subresource) a request path addresses; "" for discovery."""
    target = addressed(path)
    sub = target.subresource.split("/")[0]  # services/<name>/proxy/<path>: services/proxy
    return f"{target.plural}/{sub}" if sub else target.plural


def instrument(http: httpx2.AsyncClient, *, metrics: Metrics) -> None:
    """Count every response in ``syncagent_api_requests_total``."""

    async def on_response(response: httpx2.Response) -> None:
        request = response.request
        url = urlsplit(str(request.url))
        params = parse_qs(url.query)
        metrics.of(RequestMetrics).api_requests.inc(
            verb=request_verb(request.method, url.path, params),
            resource=request_resource(url.path),
            dry_run="true" if "dryRun" in params else "false",
            code=str(response.status_code),
        )

    http.event_hooks = {
        "request": http.event_hooks.get("request", []),
        "response": [*http.event_hooks.get("response", []), on_response],
    }
