"""The connection every inspect command opens, and the errors it turns into one line.

``--as`` / ``--as-group`` impersonate (``Impersonate-User`` / ``Impersonate-Group`` headers),
so a plan run as the agent's ServiceAccount meets the same RBAC and admission as the agent.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import httpx2
from httpx2 import AsyncClient
from lightkube import ConfigError, KubeConfig

from syncagent.api import LoadError
from syncagent.programs.capabilities import CapabilityRequiredError
from syncagent.runtime.client import ClientConfigError, make_client
from syncagent.runtime.discovery import DiscoveryError
from syncagent.runtime.metrics import Metrics
from syncagent.ssa import SsaError

T = TypeVar("T")


class InspectError(Exception):
    """A one-line problem; the CLI prints it and exits 1."""


@dataclass(frozen=True, slots=True)
class Connection:
    """Where and as whom an inspect command talks to the API server (kubectl's flags)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    as_user: str | None = None
    as_groups: tuple[str, ...] = ()


def default_namespace(conn: Connection) -> str:
    """``-n``, else the kubeconfig context's namespace, else ``default`` (kubectl's order)."""
    if conn.namespace:
        return str(conn.namespace)
    try:
        config = KubeConfig.from_file(conn.kubeconfig) if conn.kubeconfig else KubeConfig.from_env()
        return config.get(context_name=conn.context).namespace or "default"
    except (ConfigError, OSError, KeyError, ValueError, AttributeError, TypeError):
        return "default"  # opening the client reports the configuration problem


def open_client(conn: Connection, *, impersonate: bool = True) -> AsyncClient:
    try:
        client = make_client(
            kubeconfig=conn.kubeconfig,
            context=conn.context,
            metrics=Metrics(),  # a private registry: a CLI run exports nothing
        )
    except ClientConfigError as err:
        raise InspectError(str(err)) from None
    if not impersonate:
        return client
    if conn.as_user:
        client.headers["Impersonate-User"] = conn.as_user
    for group in conn.as_groups:
        # httpx headers keep repeated keys when given as a list of pairs.
        client.headers = httpx2.Headers(
            [*client.headers.multi_items(), ("Impersonate-Group", group)]
        )
    return client


def server_of(client: AsyncClient) -> str:
    return str(client.base_url).rstrip("/")


def run_async(conn: Connection, work: Callable[[AsyncClient], Awaitable[T]]) -> T:
    """Open the client, run ``work``, close; every expected failure becomes InspectError."""

    async def main() -> T:
        client = open_client(conn)
        try:
            return await work(client)
        except DiscoveryError as err:
            if not isinstance(err.__cause__, httpx2.TransportError | OSError):
                raise
            raise InspectError(
                f"cannot reach the API server at {server_of(client)}: {_short(err.__cause__)}; "
                "check --kubeconfig and --context"
            ) from None
        except (httpx2.TransportError, OSError) as err:
            raise InspectError(
                f"cannot reach the API server at {server_of(client)}: {_short(err)}; check "
                "--kubeconfig and --context"
            ) from None
        finally:
            await client.aclose()

    try:
        with quiet_logs():
            return anyio.run(main)
    except (SsaError, LoadError, CapabilityRequiredError, DiscoveryError) as err:
        raise InspectError(_short(err)) from None


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """The programs log for the agent; a CLI run reports through its own output instead."""
    logger = logging.getLogger("syncagent")
    handler, propagate = logging.NullHandler(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _short(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return " ".join(text.split())


def one_line(err: Any) -> str:
    return _short(err)
