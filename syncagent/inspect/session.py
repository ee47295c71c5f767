"""The connection every inspect command opens, and the errors it turns into one line.

``--as`` / ``--as-group`` impersonate (``Impersonate-User`` / ``Impersonate-Group`` headers),
so a plan run as the agent's ServiceAccount meets the same RBAC and admission as the agent.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import anyio
import httpx2
from lightkube import AsyncClient, ConfigError, KubeConfig

from syncagent.api import LoadError
from syncagent.runtime.capabilities import CapabilityRequiredError
from syncagent.runtime.client import ClientConfigError, http_client, make_client
from syncagent.runtime.discovery import DiscoveryError
from syncagent.runtime.metrics import Metrics
from syncagent.ssa import SsaError

T = TypeVar("T")


class InspectError(Exception):
    """A one-line problem; the CLI prints it and exits 1."""


def add_connection_arguments(parser: argparse.ArgumentParser, *, impersonate: bool) -> None:
    parser.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context")
    parser.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        help="namespace (default: the manifest's, else the kubeconfig context's, else default)",
    )
    if impersonate:
        parser.add_argument(
            "--as",
            dest="as_user",
            metavar="USER",
            help="impersonate this user, e.g. system:serviceaccount:NS:NAME (the agent's "
            "ServiceAccount), so RBAC and admission behave as they will for the agent",
        )
        parser.add_argument(
            "--as-group",
            dest="as_group",
            action="append",
            default=[],
            metavar="GROUP",
            help="impersonate this group too; repeatable",
        )


def default_namespace(args: argparse.Namespace) -> str:
    """``-n``, else the kubeconfig context's namespace, else ``default`` (kubectl's order)."""
    if args.namespace:
        return str(args.namespace)
    try:
        config = KubeConfig.from_file(args.kubeconfig) if args.kubeconfig else KubeConfig.from_env()
        return config.get(context_name=args.context).namespace or "default"
    except (ConfigError, OSError, KeyError):
        return "default"  # opening the client reports the configuration problem


def open_client(args: argparse.Namespace, *, impersonate: bool = True) -> AsyncClient:
    try:
        client = make_client(
            kubeconfig=args.kubeconfig,
            context=args.context,
            metrics=Metrics(),  # a private registry: a CLI run exports nothing
        )
    except ClientConfigError as err:
        raise InspectError(str(err)) from None
    http = http_client(client)
    if not impersonate:
        return client
    if getattr(args, "as_user", None):
        http.headers["Impersonate-User"] = args.as_user
    for group in getattr(args, "as_group", None) or ():
        # httpx headers keep repeated keys when given as a list of pairs.
        http.headers = httpx2.Headers([*http.headers.multi_items(), ("Impersonate-Group", group)])
    return client


def server_of(client: AsyncClient) -> str:
    return str(http_client(client).base_url).rstrip("/")


def run_async(args: argparse.Namespace, work: Callable[[AsyncClient], Awaitable[T]]) -> T:
    """Open the client, run ``work``, close; every expected failure becomes InspectError."""

    async def main() -> T:
        client = open_client(args)
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
            await client.close()

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
