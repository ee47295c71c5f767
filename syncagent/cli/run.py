"""``syncagent run``: the agent. Watches graphs and keeps them deployed until SIGTERM.

Flag names are an interface (the Helm chart passes them); keep them stable.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from syncagent.cli.errors import UserError
from syncagent.cli.flags import add_capability_argument, duration, positive_int
from syncagent.cli.shard_flags import add_shard_arguments, shard_settings
from syncagent.controller import Reconcilers
from syncagent.programs.capabilities import (
    GROUP_VERSIONS,
    CapabilityRequiredError,
    capability_overrides,
    resolver,
)
from syncagent.programs.fights import Fights
from syncagent.programs.pathway_watches import add_pathway_watches
from syncagent.programs.view import CacheStore
from syncagent.runtime import http
from syncagent.runtime.backoff import Backoff
from syncagent.runtime.cache import (
    Cache,
    controller_owner_key,
    enqueue,
    owner_keys,
    self_key,
    split_key,
)
from syncagent.runtime.client import ClientConfigError, make_client
from syncagent.runtime.latency import ChangeLatency
from syncagent.runtime.leader import LeaseConfig, default_identity
from syncagent.runtime.logging import configure_logging
from syncagent.runtime.manager import Manager, ManagerOptions
from syncagent.runtime.metrics import default_metrics
from syncagent.runtime.queue import WorkQueue
from syncagent.runtime.shard import ShardSettings
from syncagent.runtime.watch import WatchTarget
from syncagent.runtime.watchset import WatchSet
from syncagent.ssa import Engine
from syncagent.ssa.fights import FightDetector, FightPolicy

DESCRIPTION = """\
Run the agent: watch DynamoGraphDeployments and DynamoComponentDeployments and keep their
workloads (DynamoComponentDeployments, Deployments, LeaderWorkerSets, Services, discovery
ServiceAccounts/Roles/RoleBindings, wait-for-leader ConfigMaps) applied through server-side apply. What other writers add
beside the agent's fields stays theirs; a writer that keeps taking fields back is named in a
FieldFight event and left alone for a backoff (--fight-*; docs/ownership.md). Logs are JSON lines
on stderr. SIGTERM stops it gracefully (reconciles in flight finish, the Lease is released)."""

DGD_KIND = "DynamoGraphDeployment"
DCD_KIND = "DynamoComponentDeployment"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
MODEL_HASH_LABEL = "nvidia.com/dynamo-base-model-hash"
IDENTITY_SELECTOR = "app.kubernetes.io/managed-by=dynamo-operator"
COMPONENT_POD_SELECTOR = "nvidia.com/dynamo-component-pod=true"
# Our wait-for-leader ConfigMaps carry the graph (or standalone DCD) name (render/multinode).
WAIT_LEADER_SELECTOR = "nvidia.com/dynamo-graph-deployment-name"
SA_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def default_lease_namespace() -> str:
    if SA_NAMESPACE_FILE.is_file():
        return SA_NAMESPACE_FILE.read_text().strip()
    return os.environ.get("POD_NAMESPACE") or "default"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run",
        help="run the agent (watch graphs and keep them deployed)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig file (default: in-cluster, then $KUBECONFIG or ~/.kube/config)",
    )
    p.add_argument(
        "--context", metavar="NAME", help="kubeconfig context (default: the current one)"
    )
    p.add_argument(
        "-n",
        "--namespace",
        action="append",
        default=[],
        metavar="NS",
        help="watch only this namespace; repeatable (default: all namespaces)",
    )
    p.add_argument(
        "--concurrency",
        type=positive_int,
        default=4,
        metavar="N",
        help="reconciles running at once per controller (default 4)",
    )
    add_capability_argument(p)
    add_shard_arguments(p)
    p.add_argument(
        "--discovery-backend",
        choices=("kubernetes", "etcd"),
        default="kubernetes",
        help="default Dynamo discovery backend of components whose pod template does not set "
        "nvidia.com/dynamo-discovery-backend (default kubernetes)",
    )
    p.add_argument(
        "--metrics-bind-address",
        default=":8080",
        metavar="HOST:PORT",
        help='serve /metrics (and /healthz, /readyz) here; port 0 picks a free port; "0" switches it off (default :8080)',
    )
    p.add_argument(
        "--health-probe-bind-address",
        default=":8081",
        metavar="HOST:PORT",
        help='serve /healthz and /readyz here; "0" switches it off (default :8081)',
    )
    p.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="elect a leader through a coordination.k8s.io Lease; only the leader writes (default on; --no-leader-elect for a single replica)",
    )
    p.add_argument(
        "--leader-election-namespace",
        default=None,
        metavar="NS",
        help="namespace of the Lease (default: the pod's namespace, $POD_NAMESPACE, else default)",
    )
    p.add_argument(
        "--leader-election-id",
        default="syncagent",
        metavar="NAME",
        help="name of the Lease (default syncagent)",
    )
    p.add_argument(
        "--leader-election-lease-duration",
        type=duration,
        default=15.0,
        metavar="DURATION",
        help="how long a Lease holds without renewal (default 15s)",
    )
    p.add_argument(
        "--leader-election-renew-deadline",
        type=duration,
        default=10.0,
        metavar="DURATION",
        help="the leader stops leading when it cannot renew within this (default 10s)",
    )
    p.add_argument(
        "--leader-election-retry-period",
        type=duration,
        default=2.0,
        metavar="DURATION",
        help="how often candidates try to acquire or renew (default 2s)",
    )
    p.add_argument(
        "--resync-period",
        type=duration,
        default=600.0,
        metavar="DURATION",
        help="reconcile every graph and component this often even without changes (default 10m)",
    )
    p.add_argument(
        "--fight-threshold",
        type=positive_int,
        default=3,
        metavar="N",
        help="a field fight is declared when the same other field manager takes the same "
        "fields back N times within --fight-window (default 3)",
    )
    p.add_argument(
        "--fight-window",
        type=duration,
        default=300.0,
        metavar="DURATION",
        help="the window in which take-backs count towards a fight (default 5m)",
    )
    p.add_argument(
        "--fight-backoff",
        type=duration,
        default=60.0,
        metavar="DURATION",
        help="how long the fought-over fields are first left to the other manager; doubles "
        "while the fight goes on (default 1m)",
    )
    p.add_argument(
        "--fight-max-backoff",
        type=duration,
        default=3600.0,
        metavar="DURATION",
        help="the longest backoff of a fight (default 1h)",
    )
    p.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="log level (default info)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure_logging(level=args.log_level)
    try:
        settings = capability_overrides(args.capability)
    except ValueError as err:
        raise UserError(str(err)) from None
    try:
        client = make_client(kubeconfig=args.kubeconfig, context=args.context)
    except ClientConfigError as err:
        raise UserError(str(err)) from None
    shard = shard_settings(args)
    lease = None
    if args.leader_elect:
        try:
            lease = LeaseConfig(
                namespace=args.leader_election_namespace or default_lease_namespace(),
                name=shard.lease_name(args.leader_election_id),
                identity=default_identity(),
                lease_duration=args.leader_election_lease_duration,
                renew_deadline=args.leader_election_renew_deadline,
                retry_period=args.leader_election_retry_period,
            )
        except ValueError as err:
            raise UserError(str(err)) from None
    metrics_address = None if args.metrics_bind_address == "0" else args.metrics_bind_address
    options = ManagerOptions(
        metrics_address=metrics_address,
        lease=lease,
        group_versions=GROUP_VERSIONS,
        resolve=resolver(settings),
    )
    try:
        fight_policy = FightPolicy(
            threshold=args.fight_threshold,
            window=args.fight_window,
            backoff=args.fight_backoff,
            max_backoff=args.fight_max_backoff,
        )
    except ValueError as err:
        raise UserError(str(err)) from None
    manager = Manager(client, options, metrics=default_metrics())
    wire(manager, client, args, fights=fight_policy, shard=shard)
    health = None if args.health_probe_bind_address == "0" else args.health_probe_bind_address
    try:
        anyio.run(_serve, manager, health)
    except BaseException as err:
        required = _find(err, CapabilityRequiredError)
        if required is not None:
            raise UserError(str(required)) from None
        raise
    return 0


async def _serve(manager: Manager, health: str | None) -> None:
    async with anyio.create_task_group() as tg:
        if health is not None:
            table = http.routes(metrics=manager.metrics, health=manager.health)
            await tg.start(http.serve, health, table)
        await manager.run()
        tg.cancel_scope.cancel()


def _find(err: BaseException, kind: type[BaseException]) -> BaseException | None:
    if isinstance(err, kind):
        return err
    for inner in getattr(err, "exceptions", ()):
        found = _find(inner, kind)
        if found is not None:
            return found
    return None


def wire(
    manager: Manager,
    client: Any,
    args: argparse.Namespace,
    *,
    fights: FightPolicy | None = None,
    shard: ShardSettings | None = None,
) -> Reconcilers:
    """Watches, caches, the two controllers and the handlers that connect them. A ``shard``
    watches only its graphs (runtime/shard.py)."""
    shard = shard or ShardSettings()
    manager.watches = WatchSet(
        client,
        metrics=manager.metrics,
        optional=manager.options.group_versions,
        on_not_found=manager.discovery.request_refresh,
        watch_timeout=manager.options.watch_timeout,
    )
    namespaces: list[str | None] = list(args.namespace) or [None]
    store = CacheStore()

    def watch(kind: str, group: str, version: str, resource: str, **kw: Any) -> list[Cache[Any]]:
        caches = []
        for ns in namespaces:
            target = WatchTarget(group, version, resource, namespace=ns, **kw)
            cache = manager.watches.add(target)
            store.add(kind, cache)
            caches.append(cache)
        return caches

    graphs = watch(
        DGD_KIND,
        "nvidia.com",
        "v1beta1",
        "dynamographdeployments",
        label_selector=shard.selector or None,
    )
    components = watch(DCD_KIND, "nvidia.com", "v1beta1", "dynamocomponentdeployments")
    workloads = watch("Deployment", "apps", "v1", "deployments", label_selector=COMPONENT_LABEL)
    workloads += watch(
        "LeaderWorkerSet",
        "leaderworkerset.x-k8s.io",
        "v1",
        "leaderworkersets",
        label_selector=COMPONENT_LABEL,
    )
    services = watch("Service", "", "v1", "services", label_selector=COMPONENT_LABEL)
    models = watch("Service", "", "v1", "services", label_selector=MODEL_HASH_LABEL)
    identity = watch(
        "ServiceAccount", "", "v1", "serviceaccounts", label_selector=IDENTITY_SELECTOR
    )
    identity += watch(
        "Role", "rbac.authorization.k8s.io", "v1", "roles", label_selector=IDENTITY_SELECTOR
    )
    identity += watch(
        "RoleBinding",
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        label_selector=IDENTITY_SELECTOR,
    )
    wait_leader = watch("ConfigMap", "", "v1", "configmaps", label_selector=WAIT_LEADER_SELECTOR)
    namespace_facts = watch(
        "Secret", "", "v1", "secrets", field_selector="type=kubernetes.io/dockerconfigjson"
    )
    namespace_facts += watch(
        "ServiceAccount", "", "v1", "serviceaccounts", label_selector=COMPONENT_POD_SELECTOR
    )
    checkpoints = watch("DynamoCheckpoint", "nvidia.com", "v1alpha1", "dynamocheckpoints")

    latency = ChangeLatency(manager.metrics.graph_status_latency)
    for cache in graphs:
        cache.add_handler(latency.handle)
    reconcilers = Reconcilers(
        engine=Engine(client),
        store=store,
        recorder=manager.events,
        capabilities=lambda: manager.capabilities,  # type: ignore[arg-type,return-value]
        metrics=manager.metrics,
        discovery_backend=args.discovery_backend,
        fights=Fights(FightDetector(fights), recorder=manager.events, metrics=manager.metrics),
        latency=latency,
        shard=shard,
    )
    backoff = Backoff(base=1.0, cap=300.0)

    def keys_of(caches: list[Cache[Any]]) -> Callable[[], list[str]]:
        # Cache iterates over objects, not keys.
        return lambda: [k for c in caches for k in c.keys()]  # noqa: SIM118

    dgd_queue = manager.add_controller(
        "dgd",
        reconcilers.reconcile_graph,
        concurrency=args.concurrency,
        resync_period=args.resync_period,
        keys=keys_of(graphs),
        backoff=backoff,
        requeue_on_capability_change=True,
    )
    dcd_queue = manager.add_controller(
        "dcd",
        reconcilers.reconcile_component,
        concurrency=args.concurrency,
        resync_period=args.resync_period,
        keys=keys_of(components),
        backoff=backoff,
        requeue_on_capability_change=True,
    )
    add_pathway_watches(watch, store, dgd_queue.add, graphs)
    _connect(
        dgd_queue,
        dcd_queue,
        graphs=graphs,
        components=components,
        workloads=workloads,
        services=services,
        models=models,
        identity=identity,
        wait_leader=wait_leader,
        namespace_facts=namespace_facts,
        checkpoints=checkpoints,
    )
    return reconcilers


def _connect(
    dgd_queue: WorkQueue,
    dcd_queue: WorkQueue,
    **caches: list[Cache[Any]],
) -> None:
    """Which changes re-queue which keys."""
    graph_owner = controller_owner_key(DGD_KIND, api_group="nvidia.com")
    component_owner = controller_owner_key(DCD_KIND, api_group="nvidia.com")
    plan: list[tuple[str, WorkQueue, Any]] = [
        ("graphs", dgd_queue, self_key),
        ("components", dcd_queue, self_key),
        ("components", dgd_queue, graph_owner),
        ("workloads", dcd_queue, component_owner),
        ("services", dcd_queue, component_owner),
        ("services", dgd_queue, graph_owner),
        ("models", dcd_queue, owner_keys(DCD_KIND, api_group="nvidia.com")),
        ("models", dgd_queue, owner_keys(DGD_KIND, api_group="nvidia.com")),
        ("identity", dgd_queue, graph_owner),
        ("identity", dcd_queue, component_owner),
        ("wait_leader", dgd_queue, graph_owner),
        ("wait_leader", dcd_queue, component_owner),
    ]
    for name, queue, key_func in plan:
        for cache in caches[name]:
            cache.add_handler(enqueue(queue.add, key_func))
    for cache in caches["namespace_facts"]:
        cache.add_handler(_namespace_handler(dcd_queue, caches["components"]))
    for cache in caches["checkpoints"]:
        cache.add_handler(_namespace_handler(dgd_queue, caches["graphs"]))
        cache.add_handler(_namespace_handler(dcd_queue, caches["components"]))


def _namespace_handler(queue: WorkQueue, caches: list[Cache[Any]]) -> Callable[[Any], None]:
    """Re-queue every key of ``caches`` in the namespace of the changed object."""

    def handle(change: Any) -> None:
        for cache in caches:
            for key in cache.keys():  # noqa: SIM118 - a Cache iterates over objects
                if split_key(key)[0] == change.namespace:
                    queue.add(key)

    return handle
