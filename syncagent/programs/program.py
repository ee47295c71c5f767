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
from typing import TYPE_CHECKING, Any, Protocol

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


class PathwayFunctions(Protocol):
    """The few functions that differ from one pathway to the next; everything else about a
    pathway is declared (:class:`Program`). A pathway's class subclasses this protocol to keep
    the defaults of the last three."""

    def claim(self, route: Route) -> Claim:
        """Whether it takes the graph; asked only while its capability is on."""
        ...

    def render(
        self, graph: DynamoGraphDeployment, *, env: Environment, caps: Capabilities
    ) -> list[Rendered]: ...

    async def reconcile(self, ctx: GraphContext) -> ProgramResult: ...

    def conditions(self, selection: Selection) -> tuple[Condition, ...]:
        """The graph conditions it reports about the routing decision (absent: removed)."""
        return ()

    def cannot_render(self, route: Route) -> str:
        """Why ``render --program <name>`` cannot render this graph; ``""`` when it can."""
        return ""

    def dcd_components(self, components: Sequence[Component]) -> list[str] | None:
        """Components it renders as DynamoComponentDeployments (None: all)."""
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Program:
    """One pathway: what it declares, and its :class:`PathwayFunctions`. Programs are listed in
    :data:`syncagent.programs.registry.PROGRAMS` in routing precedence order; the last one takes
    every graph nobody else claims."""

    name: str  # the ``render --program`` value
    pathway: str  # ``status.routing.pathway`` and the ``WorkloadPathway`` reason
    summary: str  # what it applies, for ``render --help`` ("Grove (a PodCliqueSet)")
    # The capability that must be on for it to claim a graph (None: always), declared in its
    # package: ``--capability``, discovery and the metric take it from the registry.
    capability: Capability | None
    # Kinds this program leaves controlled by the graph; the first is its own workload root.
    # Another pathway deletes them as stale once it serves the graph (docs/routing.md §3).
    owns: tuple[Resource, ...]
    functions: PathwayFunctions
    # What it reads besides the graph reconciler's kinds, and which graphs their changes re-queue.
    watches: tuple[Watched, ...] = ()
    # The field managers it writes with besides the common ones (``fieldmanagers``): blame,
    # conflicts, managers, the takeover policy and the chart's subresource rights read them.
    managers: tuple[FieldManager, ...] = ()
    # Annotations whose values routing records in ``status.routing`` with the pathway; its
    # ``claim`` may compare them with the graph's (``route.recorded.annotations``).
    records: tuple[str, ...] = ()
    # The annotation a graph opts in with (value ``true``, any case); "" for none.
    opt_in: str = ""

    def wants(self, annotations: Mapping[str, str]) -> bool:
        """Whether the graph opted in to this program (cheap: annotations only)."""
        return bool(self.opt_in) and (annotations.get(self.opt_in) or "").lower() == "true"
