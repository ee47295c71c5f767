"""What a program is (docs/design.md §3): the seam every pathway plugs into.

A program declares its pathway (the ``status.routing.pathway`` value), the capability it
needs (and what API that capability requires), the kinds it owns and watches, how it claims a graph (docs/routing.md §2), how it renders
offline and how it reconciles. Everything that used to name a pathway (routing precedence,
recorded-pathway detection, stale cleanup on migration, discovery lists, watches,
``render --program``, ``plan``'s store kinds, the chart's RBAC rules) is derived from the
programs in :mod:`syncagent.programs.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from fieldmanagers.contract import FieldManager
from syncagent.api import Component, DynamoGraphDeployment
from syncagent.programs.capabilities import Capabilities, Capability
from syncagent.rest.resource import Resource

if TYPE_CHECKING:
    from syncagent.programs.base import ProgramResult
    from syncagent.programs.context import GraphContext
    from syncagent.programs.routing import RecordedRouting, Selection
    from syncagent.programs.view import Store
    from syncagent.render import Environment, Rendered
    from syncagent.runtime.cache import Cache


# The reconcilers' queues a watch re-queues keys of, and how a changed object names them.
GRAPH, COMPONENT = "graph", "component"
SELF, CONTROLLER, OWNERS, NAMESPACE = "self", "controller", "owners", "namespace"
# A key function of the store: the keys a changed object re-queues (a pathway's own rule).
KeysOf = Callable[["Store"], Callable[[dict[str, Any]], list[str]]]


@dataclass(frozen=True, slots=True)
class Requeue:
    """Which keys of the ``GRAPH`` or ``COMPONENT`` queue a change of a watched object re-queues.

    ``key``: ``SELF`` (its own; its own status writes do not wake it), ``CONTROLLER`` (the graph
    or component controlling it), ``OWNERS`` (every graph or component owning it), ``NAMESPACE``
    (every graph or component of its namespace), or a :data:`KeysOf`. ``soon``: the changes of a
    graph's children within ``controller.setup.CHILD_WINDOW`` cost one reconcile.
    """

    queue: str
    key: str | KeysOf
    soon: bool = False


@dataclass(frozen=True, slots=True)
class Watched:
    """A kind a program reads from the caches; ``write``: it also creates/patches/deletes it.

    ``label_selector``/``field_selector`` narrow the agent's watch (None: every object).
    ``transform``: what its cache keeps of each object (None: the whole object).
    ``requeues``: which keys its changes re-queue, in the order their handlers run.
    """

    kind: Resource
    write: bool = False
    label_selector: str | None = None
    field_selector: str | None = None
    transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    requeues: tuple[Requeue, ...] = ()


@dataclass(frozen=True, slots=True)
class Route:
    """What routing looks at: the graph's annotations and components, the capabilities, and the
    pathway recorded in its status (or derived from the children it controls)."""

    annotations: Mapping[str, str]
    components: Sequence[Mapping[str, Any]]
    caps: Capabilities
    recorded: RecordedRouting | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """A program's answer to "do you take this graph?".

    ``wanted``: the graph asked for it (an opt-in annotation). ``reason``: why a wanted program
    cannot take it. ``held_back``: it would take it but the routed-graph exception keeps the
    graph where it is (docs/routing.md §2).
    """

    takes: bool
    wanted: bool = False
    reason: str = ""
    held_back: bool = False
    note: str = ""  # added to ``WorkloadPathway``'s message while ``held_back``


@dataclass(frozen=True, slots=True)
class Condition:
    """A graph condition a program reports from the routing decision (docs/routing.md §2).
    ``warning``: the Warning event ``(reason, message)`` raised when it appears or changes."""

    type: str
    status: str
    reason: str
    message: str
    warning: tuple[str, str] | None = None


# ``watch(kind, **selectors)`` adds one watch per namespace and returns its caches.
WatchFn = Callable[..., "list[Cache[Any]]"]


class Program(Protocol):
    """One pathway. Programs are listed in :data:`syncagent.programs.registry.PROGRAMS` in
    routing precedence order; the last one takes every graph nobody else claims."""

    name: ClassVar[str]  # the ``render --program`` value
    pathway: ClassVar[str]  # ``status.routing.pathway`` and the ``WorkloadPathway`` reason
    # The capability that must be on for it to claim a graph (None: always), declared in its
    # package: ``--capability``, discovery and the metric take it from the registry.
    capability: ClassVar[Capability | None]
    # Kinds this program leaves controlled by the graph; the first is its own workload root.
    # Another pathway deletes them as stale once it serves the graph (docs/routing.md §3).
    owns: ClassVar[tuple[Resource, ...]]
    # What it reads besides the graph reconciler's kinds, and which graphs their changes re-queue.
    watches: ClassVar[tuple[Watched, ...]]
    # The field managers it writes with besides the common ones (``fieldmanagers``): blame,
    # conflicts, managers and the chart's subresource rights read them from the registry.
    managers: ClassVar[tuple[FieldManager, ...]]
    summary: ClassVar[str]  # what it applies, for ``render --help`` ("Grove (a PodCliqueSet)")
    # Annotations whose values routing records in ``status.routing`` with the pathway; its
    # ``claim`` may compare them with the graph's (``route.recorded.annotations``).
    records: ClassVar[tuple[str, ...]]

    def wants(self, annotations: Mapping[str, str]) -> bool:
        """Whether the graph opted in to this program (cheap: annotations only)."""
        ...

    def claim(self, route: Route) -> Claim: ...

    def conditions(self, selection: Selection) -> tuple[Condition, ...]:
        """The graph conditions it reports about the routing decision (absent: removed)."""
        ...

    def cannot_render(self, route: Route) -> str:
        """Why ``render --program <name>`` cannot render this graph; ``""`` when it can."""
        ...

    def dcd_components(self, components: Sequence[Component]) -> list[str] | None:
        """Components it renders as DynamoComponentDeployments (None: all)."""
        ...

    def render(
        self, graph: DynamoGraphDeployment, *, env: Environment, caps: Capabilities
    ) -> list[Rendered]: ...

    async def reconcile(self, ctx: GraphContext) -> ProgramResult: ...
