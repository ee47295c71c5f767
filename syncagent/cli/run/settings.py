"""``syncagent run``'s settings: small dataclasses, each field declaring its flag once.

The flag (name, type, default, help) lives in the field's metadata; :func:`add_flags` adds the
flags of a settings class to a parser and :func:`from_args` builds the settings back from the
parsed arguments. Flag names are an interface (the Helm chart passes them); keep them stable.
Only argparse and plain values here: the runtime, the controllers and the fight detector get
their own option objects from these (``syncagent.cli.run``).
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

from syncagent.cli.flags import duration, positive_int
from syncagent.cli.operatorconfigfile import HELP
from syncagent.runtime.workers import DEFAULT_CONCURRENCY

T = TypeVar("T")


def flag(*names: str, default: Any = None, **kwargs: Any) -> Any:
    """A dataclass field whose value comes from the command-line flag ``names``."""
    metadata = {"flag": (names, {"default": default, **kwargs})}
    if isinstance(default, list):  # a repeatable flag: each settings object gets its own list
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def add_flags(parser: argparse.ArgumentParser, cls: type[Any]) -> None:
    for f in dataclasses.fields(cls):
        names, kwargs = f.metadata["flag"]
        parser.add_argument(*names, **kwargs)


def from_args(cls: type[T], args: argparse.Namespace) -> T:
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        names, kwargs = f.metadata["flag"]
        dest = kwargs.get("dest") or names[-1].lstrip("-").replace("-", "_")
        values[f.name] = getattr(args, dest)
    return cls(**values)


@dataclass(frozen=True)
class Connection:
    kubeconfig: str | None = flag(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig file (default: in-cluster, then $KUBECONFIG or ~/.kube/config)",
    )
    context: str | None = flag(
        "--context", metavar="NAME", help="kubeconfig context (default: the current one)"
    )
    request_timeout: float = flag(
        "--request-timeout",
        type=duration,
        default=30.0,
        metavar="DURATION",
        help="give up on an API request (and retry it when that is safe) after this long "
        "without an answer; a watch gets this long for its first response (default 30s)",
    )


@dataclass(frozen=True)
class Watches:
    namespaces: list[str] = flag(
        "-n",
        "--namespace",
        action="append",
        default=[],
        metavar="NS",
        help="watch only this namespace; repeatable (default: all namespaces)",
    )
    concurrency: int = flag(
        "--concurrency",
        type=positive_int,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"reconciles running at once per controller (default {DEFAULT_CONCURRENCY})",
    )


@dataclass(frozen=True)
class Shard:
    name: str = flag(
        "--shard-name",
        default="",
        metavar="NAME",
        help="this agent is shard NAME: its Lease is <leader-election-id>-NAME (default: not "
        "sharded; docs/sharding.md)",
    )
    selector: str = flag(
        "--shard-selector",
        default="",
        metavar="SELECTOR",
        help="reconcile only graphs whose labels match this label selector (with "
        "--shard-name; give every shard a disjoint one)",
    )


@dataclass(frozen=True)
class Discovery:
    backend: str | None = flag(
        "--discovery-backend",
        choices=("kubernetes", "etcd"),
        default=None,
        help="default Dynamo discovery backend of components whose pod template does not set "
        "nvidia.com/dynamo-discovery-backend (default: the --operator-config file's "
        "discovery.backend, else kubernetes)",
    )
    interval: float = flag(
        "--discovery-interval",
        type=duration,
        default=60.0,
        metavar="DURATION",
        help="look for the optional APIs (Grove, LWS, DisaggregatedSet, checkpoints) this often; "
        "a watch or a request that finds its API gone looks at once (default 60s)",
    )


@dataclass(frozen=True)
class OperatorConfig:
    path: str | None = flag("--operator-config", metavar="FILE", default=None, help=HELP)


@dataclass(frozen=True)
class Http:
    metrics_address: str = flag(
        "--metrics-bind-address",
        default="127.0.0.1:8080",
        metavar="HOST:PORT",
        help="serve /metrics here (plain HTTP on localhost by default; with "
        "--health-probe-bind-address 0 also /healthz and /readyz); port 0 picks a free port; "
        '"0" switches it off (default 127.0.0.1:8080)',
    )
    metrics_secure: bool = flag(
        "--metrics-secure",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="serve /metrics over HTTPS, only to requests whose bearer token the API server "
        "accepts (TokenReview) and allows to get the path (SubjectAccessReview); needs create "
        "on tokenreviews and subjectaccessreviews (default off; the chart turns it on)",
    )
    metrics_cert_dir: str = flag(
        "--metrics-cert-dir",
        default="",
        metavar="DIR",
        help="tls.crt and tls.key of --metrics-secure (default: a self-signed pair made at start)",
    )
    health_address: str = flag(
        "--health-probe-bind-address",
        default=":8081",
        metavar="HOST:PORT",
        help='serve /healthz and /readyz here, and nothing else; "0" switches it off and '
        "serves them beside /metrics (default :8081)",
    )

    history_address: str = flag(
        "--history-bind-address",
        default="0",
        metavar="HOST:PORT",
        help="keep the ownership history of the objects the agent writes and serve it here as "
        "the aggregated API history.syncagent.io/v1alpha1: HTTPS, only to the API server's front "
        "proxy, each object only to callers who may get it (syncagent blame --history reads it; "
        'docs/ownership.md §6); "0" keeps none (default 0; the chart serves it on :8082)',
    )
    history_cert_dir: str = flag(
        "--history-cert-dir",
        default="",
        metavar="DIR",
        help="tls.crt and tls.key the history port serves; the APIService's caBundle must "
        "sign them (default: a self-signed pair made at start, which the API server will not "
        "trust)",
    )

    @property
    def metrics(self) -> str | None:
        return None if self.metrics_address == "0" else self.metrics_address

    @property
    def health(self) -> str | None:
        return None if self.health_address == "0" else self.health_address

    @property
    def history(self) -> str | None:
        return None if self.history_address == "0" else self.history_address


@dataclass(frozen=True)
class LeaderElection:
    enabled: bool = flag(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="elect a leader through a coordination.k8s.io Lease; only the leader writes "
        "(default on; --no-leader-elect for a single replica)",
    )
    namespace: str | None = flag(
        "--leader-election-namespace",
        metavar="NS",
        help="namespace of the Lease (default: the pod's namespace, $POD_NAMESPACE, else default)",
    )
    name: str = flag(
        "--leader-election-id",
        default="syncagent",
        metavar="NAME",
        help="name of the Lease (default syncagent)",
    )
    lease_duration: float = flag(
        "--leader-election-lease-duration",
        type=duration,
        default=15.0,
        metavar="DURATION",
        help="how long a Lease holds without renewal (default 15s)",
    )
    renew_deadline: float = flag(
        "--leader-election-renew-deadline",
        type=duration,
        default=10.0,
        metavar="DURATION",
        help="the leader stops leading when it cannot renew within this (default 10s)",
    )
    retry_period: float = flag(
        "--leader-election-retry-period",
        type=duration,
        default=2.0,
        metavar="DURATION",
        help="how often candidates try to acquire or renew (default 2s)",
    )


@dataclass(frozen=True)
class Resync:
    period: float = flag(
        "--resync-period",
        type=duration,
        default=600.0,
        metavar="DURATION",
        help="reconcile every graph and component this often even without changes (default 10m)",
    )


@dataclass(frozen=True)
class StatusWrites:
    progress_interval: float = flag(
        "--status-progress-interval",
        type=duration,
        default=5.0,
        metavar="DURATION",
        help="write a pending graph status that reports only progress (condition messages and "
        "replica counts change, its state and conditions do not) at most this often (default 5s)",
    )


@dataclass(frozen=True)
class FightDetector:
    threshold: int = flag(
        "--fight-threshold",
        type=positive_int,
        default=3,
        metavar="N",
        help="a field fight is declared when the same other field manager takes the same "
        "fields back N times within --fight-window (default 3)",
    )
    window: float = flag(
        "--fight-window",
        type=duration,
        default=300.0,
        metavar="DURATION",
        help="the window in which take-backs count towards a fight (default 5m)",
    )
    backoff: float = flag(
        "--fight-backoff",
        type=duration,
        default=60.0,
        metavar="DURATION",
        help="how long the fought-over fields are first left to the other manager; doubles "
        "while the fight goes on (default 1m)",
    )
    max_backoff: float = flag(
        "--fight-max-backoff",
        type=duration,
        default=3600.0,
        metavar="DURATION",
        help="the longest backoff of a fight (default 1h)",
    )


@dataclass(frozen=True)
class Logging:
    level: str = flag(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="log level (default info)",
    )


@dataclass(frozen=True)
class Identity:
    service_account: str = flag(
        "--service-account",
        default="",
        metavar="NAMESPACE/NAME",
        help="the ServiceAccount the agent runs as, whose name no rendered pod may carry "
        "(default: read from the in-cluster token; the chart sets it)",
    )


@dataclass(frozen=True)
class AgentSettings:
    """Everything ``syncagent run`` is told on its command line, grouped by concern."""

    connection: Connection
    watches: Watches
    shard: Shard
    discovery: Discovery
    operator_config: OperatorConfig
    http: Http
    leader_election: LeaderElection
    resync: Resync
    status: StatusWrites
    fights: FightDetector
    logging: Logging
    identity: Identity
    capability: list[Any]  # (name, Setting) pairs of --capability (flags.add_capability_argument)


# In --help order (the order the flags had before they were grouped).
GROUPS: tuple[tuple[str, type[Any]], ...] = (
    ("connection", Connection),
    ("watches", Watches),
    ("shard", Shard),
    ("discovery", Discovery),
    ("operator_config", OperatorConfig),
    ("http", Http),
    ("leader_election", LeaderElection),
    ("resync", Resync),
    ("status", StatusWrites),
    ("fights", FightDetector),
    ("logging", Logging),
    ("identity", Identity),
)


def agent_settings(args: argparse.Namespace) -> AgentSettings:
    groups = {name: from_args(cls, args) for name, cls in GROUPS}
    return AgentSettings(capability=list(args.capability), **groups)
