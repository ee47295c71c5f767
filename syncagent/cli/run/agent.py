"""The composition root of ``syncagent run``: settings in, a running manager out.

The controllers wire themselves (:func:`syncagent.controller.setup`); this module only turns
the command-line settings into the runtime's, the controllers' and the fight detector's
option objects, and serves until SIGTERM.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.abc

from syncagent.api.operatorconfig import LoadedConfig
from syncagent.cli.errors import UserError
from syncagent.cli.operatorconfigfile import (
    discovery_backend,
    infrastructure_of,
    read_operator_config,
)
from syncagent.cli.run.ownaccount import own_account
from syncagent.cli.run.settings import AgentSettings, Http, LeaderElection
from syncagent.controller import ControllerSettings, historyapi, setup
from syncagent.controller.history import HistoryRecorder
from syncagent.programs.capabilities import (
    CapabilityRequiredError,
    capability_overrides,
    resolver,
)
from syncagent.programs.registry import Registry
from syncagent.runtime import http, process
from syncagent.runtime.client import ClientConfigError
from syncagent.runtime.connections import make_clients
from syncagent.runtime.leader import LeaseConfig, default_identity
from syncagent.runtime.logging import configure_logging
from syncagent.runtime.manager import Manager, ManagerOptions
from syncagent.runtime.metrics import default_metrics
from syncagent.runtime.shard import ShardSettings
from syncagent.ssa.fights import FightPolicy
from syncagent.ssa.historylog import HistoryLog

# A listening socket's failures: the address is taken, not this machine's, or a privileged port.
_LISTEN_ERRORS = (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES)
SA_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
log = logging.getLogger(__name__)


def default_lease_namespace() -> str:
    if SA_NAMESPACE_FILE.is_file():
        return SA_NAMESPACE_FILE.read_text().strip()
    return os.environ.get("POD_NAMESPACE") or "default"


def serve(settings: AgentSettings, *, programs: Registry) -> int:
    """Run the agent until SIGTERM; a setting the runtime rejects is a :class:`UserError`."""
    configured = _start(settings)
    try:
        capabilities = capability_overrides(settings.capability, declared=programs.capabilities())
        shard = shard_of(settings)
        clients = make_clients(
            kubeconfig=settings.connection.kubeconfig,
            context=settings.connection.context,
            timeout=settings.connection.request_timeout,
        )
        client = clients.requests
        options = ManagerOptions(
            metrics_address=settings.http.metrics,
            metrics_probes=settings.http.health is None,
            metrics_secure=settings.http.metrics_secure,
            metrics_cert_dir=settings.http.metrics_cert_dir or None,
            lease=_lease(settings.leader_election, shard),
            group_versions=programs.group_versions(),
            resolve=resolver(capabilities, declared=programs.capabilities()),
            discovery_interval=settings.discovery.interval,
        )
        fights = FightPolicy(
            threshold=settings.fights.threshold,
            window=settings.fights.window,
            backoff=settings.fights.backoff,
            max_backoff=settings.fights.max_backoff,
        )
    except (ValueError, ClientConfigError) as err:
        raise UserError(str(err)) from None
    manager = Manager(client, options, metrics=default_metrics(), clients=clients)
    controllers = _controllers(settings, configured, fights=fights, shard=shard)
    history = HistoryRecorder(HistoryLog(start=time.time())) if settings.http.history else None
    setup(manager, client, controllers, programs=programs, history=history)
    # Flooding connections hold descriptors until the header deadline closes them.
    process.raise_fd_limit()
    try:
        anyio.run(_serve, manager, settings.http, history)
    except BaseException as err:
        for kind in (CapabilityRequiredError, UserError):
            found = _find(err, kind)
            if found is not None:
                raise UserError(str(found)) from None
        taken = _find(err, OSError)
        if settings.http.metrics and getattr(taken, "errno", None) in _LISTEN_ERRORS:
            # The metrics endpoint is the manager's; the others are _listen's.
            address = settings.http.metrics
            raise UserError(_cannot_listen("--metrics-bind-address", address, taken)) from None
        raise
    return 0


def _start(settings: AgentSettings) -> LoadedConfig:
    """Logging on, then the operator configuration (read before anything connects)."""
    configure_logging(level=settings.logging.level)
    return startup_operator_config(settings.operator_config.path)


def _controllers(
    settings: AgentSettings, configured: LoadedConfig, *, fights: FightPolicy, shard: ShardSettings
) -> ControllerSettings:
    return ControllerSettings(
        namespaces=tuple(settings.watches.namespaces),
        concurrency=settings.watches.concurrency,
        resync_period=settings.resync.period,
        progress_interval=settings.status.progress_interval,
        discovery_backend=discovery_backend(settings.discovery.backend, configured),
        infrastructure=infrastructure_of(configured),
        fights=fights,
        shard=shard,
        check_namespace=_check_namespace(settings),
        agent_account=own_account(settings.identity.service_account),
    )


def startup_operator_config(path: str | None) -> LoadedConfig:
    """The ``--operator-config`` file, its unused fields named once in the log."""
    loaded = read_operator_config(path)
    for line in loaded.notices():
        log.warning(
            "operator configuration fields unused",
            extra={"file": path, "detail": line, "remedy": "see docs/operatorconfig.md"},
        )
    return loaded


def shard_of(settings: AgentSettings) -> ShardSettings:
    """The shard this agent is (ValueError naming the flag when the flags are wrong)."""
    return ShardSettings(name=settings.shard.name, selector=settings.shard.selector)


def _check_namespace(settings: AgentSettings) -> str:
    """A namespace the agent writes ConfigMaps in: the first it serves, else its own."""
    if settings.watches.namespaces:
        return str(settings.watches.namespaces[0])
    return settings.leader_election.namespace or default_lease_namespace()


def _lease(election: LeaderElection, shard: ShardSettings) -> LeaseConfig | None:
    if not election.enabled:
        return None
    return LeaseConfig(
        namespace=election.namespace or default_lease_namespace(),
        name=shard.lease_name(election.name),
        identity=default_identity(),
        lease_duration=election.lease_duration,
        renew_deadline=election.renew_deadline,
        retry_period=election.retry_period,
    )


async def _serve(manager: Manager, addresses: Http, history: HistoryRecorder | None) -> None:
    async with anyio.create_task_group() as tg:
        if history is not None and addresses.history is not None:
            # Its own port: the APIService's Service points at it, and nothing else.
            served = functools.partial(
                historyapi.serve,
                manager.client,
                history,
                address=addresses.history,
                cert_dir=addresses.history_cert_dir or None,
            )
            await _listen_with(tg, served, addresses.history, "--history-bind-address")
        if addresses.health is not None:
            # Probes only: the kubelet reaches this port, so it serves nothing else.
            table = http.routes(metrics=manager.metrics, health=manager.health)
            probes = {path: table[path] for path in ("/healthz", "/readyz")}
            server = http.Server(addresses.health, probes, what="probes")
            await _listen(tg, server, "--health-probe-bind-address")
        await manager.run()
        tg.cancel_scope.cancel()


async def _listen(tg: anyio.abc.TaskGroup, server: http.Server, flag: str) -> None:
    await _listen_with(tg, functools.partial(http.serve_endpoint, server), server.address, flag)


async def _listen_with(
    tg: anyio.abc.TaskGroup, served: Callable[..., Awaitable[None]], address: str, flag: str
) -> None:
    try:
        await tg.start(served)
    except BaseException as err:
        # An endpoint with tasks of its own reports its listener's failure inside a group.
        taken = _find(err, OSError)
        if taken is None:
            raise
        raise UserError(_cannot_listen(flag, address, taken)) from None


def _cannot_listen(flag: str, address: str, err: BaseException | None) -> str:
    reason = getattr(err, "strerror", None) or str(err)
    return f"{flag} {address}: cannot listen there: {reason}; give a free HOST:PORT, or 0"


def _find(err: BaseException, kind: type[BaseException]) -> BaseException | None:
    if isinstance(err, kind):
        return err
    for inner in getattr(err, "exceptions", ()):
        found = _find(inner, kind)
        if found is not None:
            return found
    return None
