"""A registry of programs, in routing precedence order, and everything derived from them.

The registry the agent runs is built by the composition root (``syncagent.cli.pathways``,
one line per pathway) and passed down; nothing below the CLI holds one, so no module here
imports a pathway. Routing, recorded-pathway detection, stale cleanup, discovery lists,
watches, ``render --program``, ``plan``'s store kinds and the chart's RBAC rules read the
registry; nothing else names a pathway.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import fieldmanagers
from fieldmanagers import ownership
from fieldmanagers.contract import FieldManager
from syncagent.kube import kinds
from syncagent.programs import capabilities
from syncagent.programs.capabilities import Capability
from syncagent.programs.program import (
    COMPONENT,
    CONTROLLER,
    GRAPH,
    NAMESPACE,
    OWNERS,
    SELF,
    Claim,
    Condition,
    Program,
    Requeue,
    Route,
    Watched,
)
from syncagent.programs.routing import RecordedRouting, Selection, recorded
from syncagent.programs.upstream_takeover import COMMON_CONTENT, upstream_policy
from syncagent.programs.view import pull_secret_summary
from syncagent.rest.resource import Resource
from syncagent.ssa.takeover import TakeoverPolicy

# What the graph and component reconcilers read whatever the pathway (their own objects, the
# Services, discovery identity, wait-for-leader ConfigMaps, namespace facts, checkpoints).
COMPONENT_LABEL = "nvidia.com/dynamo-component"
MODEL_HASH_LABEL = "nvidia.com/dynamo-base-model-hash"
IDENTITY_SELECTOR = "app.kubernetes.io/managed-by=dynamo-operator"
COMPONENT_POD_SELECTOR = "nvidia.com/dynamo-component-pod=true"
# Our wait-for-leader ConfigMaps carry the graph (or standalone DCD) name (render/multinode).
WAIT_LEADER_SELECTOR = "nvidia.com/dynamo-graph-deployment-name"
PULL_SECRETS = "type=kubernetes.io/dockerconfigjson"

# Which keys their changes re-queue: a child wakes the component controlling it at once and
# its graph within the child window; namespace facts wake every graph and component there.
_OF_COMPONENT = (Requeue(COMPONENT, CONTROLLER),)
_OF_GRAPH = (Requeue(GRAPH, CONTROLLER, soon=True),)
_OF_BOTH = _OF_GRAPH + _OF_COMPONENT
_NAMESPACE = (Requeue(GRAPH, NAMESPACE), Requeue(COMPONENT, NAMESPACE))

GRAPHS = Watched(kinds.DGD, requeues=(Requeue(GRAPH, SELF),))
COMPONENTS = Watched(kinds.DCD, write=True, requeues=(Requeue(COMPONENT, SELF), *_OF_GRAPH))
DEPLOYMENTS = Watched(
    kinds.DEPLOYMENT, write=True, label_selector=COMPONENT_LABEL, requeues=_OF_COMPONENT
)
COMPONENT_LWS = Watched(
    kinds.LEADER_WORKER_SET, write=True, label_selector=COMPONENT_LABEL, requeues=_OF_COMPONENT
)
SERVICES = Watched(
    kinds.SERVICE, write=True, label_selector=COMPONENT_LABEL, requeues=_OF_COMPONENT + _OF_GRAPH
)
MODEL_SERVICES = Watched(
    kinds.SERVICE,
    write=True,
    label_selector=MODEL_HASH_LABEL,
    requeues=(Requeue(COMPONENT, OWNERS), Requeue(GRAPH, OWNERS, soon=True)),
)
IDENTITY_SAS = Watched(
    kinds.SERVICE_ACCOUNT, write=True, label_selector=IDENTITY_SELECTOR, requeues=_OF_BOTH
)
IDENTITY_ROLES = Watched(
    kinds.ROLE, write=True, label_selector=IDENTITY_SELECTOR, requeues=_OF_BOTH
)
IDENTITY_BINDINGS = Watched(
    kinds.ROLE_BINDING, write=True, label_selector=IDENTITY_SELECTOR, requeues=_OF_BOTH
)
WAIT_LEADER = Watched(
    kinds.CONFIG_MAP, write=True, label_selector=WAIT_LEADER_SELECTOR, requeues=_OF_BOTH
)
# Kept as name and registries only: no credential stays in the agent's memory.
PULL_SECRET_WATCH = Watched(
    kinds.SECRET,
    field_selector=PULL_SECRETS,
    transform=pull_secret_summary,
    requeues=_NAMESPACE,
)
POD_SERVICE_ACCOUNTS = Watched(
    kinds.SERVICE_ACCOUNT, label_selector=COMPONENT_POD_SELECTOR, requeues=_NAMESPACE
)
# Namespace facts (pull Secrets, component ServiceAccounts) and checkpoints feed renders of
# both: DCD workloads, and the graph-level DS roles and PodCliqueSet templates.
CHECKPOINTS = Watched(kinds.CHECKPOINT, requeues=_NAMESPACE)
# A graph's adapters carry its name, as its wait-for-leader ConfigMaps do.
SCALING_ADAPTERS = Watched(
    kinds.SCALING_ADAPTER, write=True, label_selector=WAIT_LEADER_SELECTOR, requeues=_OF_GRAPH
)
COMMON: tuple[Watched, ...] = (
    GRAPHS,
    COMPONENTS,
    DEPLOYMENTS,
    COMPONENT_LWS,
    SERVICES,
    MODEL_SERVICES,
    IDENTITY_SAS,
    IDENTITY_ROLES,
    IDENTITY_BINDINGS,
    WAIT_LEADER,
    PULL_SECRET_WATCH,
    POD_SERVICE_ACCOUNTS,
    CHECKPOINTS,
    SCALING_ADAPTERS,
)
# The kinds that control everything the agent applies: the graph and its components (every
# rendered object names one of them as its controller, docs/ownership.md).
CONTROLLERS: tuple[Resource, ...] = (GRAPHS.kind, COMPONENTS.kind)
# API groups/versions every cluster running the agent serves; the others are discovered.
ALWAYS_SERVED = frozenset({"v1", "apps/v1", "rbac.authorization.k8s.io/v1", kinds.DGD.api_version})


@dataclass(frozen=True)
class Registry:
    """Programs in routing precedence order; the last takes every graph nobody claims."""

    programs: tuple[Program, ...]
    common: tuple[Watched, ...] = COMMON

    # -- lookup -----------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.programs)

    def by_name(self, name: str) -> Program:
        return next(p for p in self.programs if p.name == name)

    def by_pathway(self, pathway: str) -> Program:
        return next(p for p in self.programs if p.pathway == pathway)

    @property
    def pathways(self) -> tuple[str, ...]:
        """The ``status.routing.pathway`` values: the DGD CRD's enum (``cli.generate``)."""
        return tuple(p.pathway for p in self.programs)

    def summary(self) -> str:
        """What each program applies, for ``render --help``: "A, B or C"."""
        texts = [p.summary for p in self.programs]
        return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} or {texts[-1]}"

    def field_managers(self) -> tuple[FieldManager, ...]:
        """Every field manager the agent writes with: ``fieldmanagers``' own, then each
        program's; the ownership manager also writes every program's workload kinds."""
        owned = (*ownership.MANAGER.kinds, *(k.kind for k in self.owned_kinds()))
        owner = replace(ownership.MANAGER, kinds=tuple(dict.fromkeys(owned)))
        out = {m.name: owner if m.name == owner.name else m for m in fieldmanagers.COMMON}
        for program in self.programs:
            out.update({m.name: m for m in program.managers if m.name not in out})
        return tuple(out.values())

    @cached_property
    def takeover_policy(self) -> TakeoverPolicy:
        """What a takeover moves from the upstream operator's entries (``programs.upstream_takeover``):
        the fields of the common content managers and of each program's own that write no
        subresource (Grove's scale patches take nothing over). Built once per registry."""
        own = (m for p in self.programs for m in p.managers if not m.subresource)
        return upstream_policy((*COMMON_CONTENT, *own))

    def capabilities(self) -> tuple[Capability, ...]:
        """Every capability ``--capability`` takes and discovery resolves: each program's, a
        capability after those it needs, then the common ones (``capabilities.COMMON``)."""
        out: dict[str, Capability] = {}

        def add(capability: Capability) -> None:
            for need in capability.needs:
                add(need)
            out.setdefault(capability.name, capability)

        for program in self.programs:
            if program.capability is not None:
                add(program.capability)
        for capability in capabilities.COMMON:
            add(capability)
        return tuple(out.values())

    # -- routing (docs/routing.md §2-3) ----------------------------------------------------------
    def select(self, route: Route) -> Selection:
        """The first program (in precedence order) whose capability is on and that takes the
        graph."""
        claims: dict[str, Claim] = {}
        winner = self.programs[-1]
        for program in self.programs:
            claim = _claim(program, route)
            claims[program.pathway] = claim
            if claim.takes:
                winner = program
                break
        for program in self.programs[len(claims) :]:
            claims[program.pathway] = Claim(False, wanted=program.wants(route.annotations))
        return Selection(winner.pathway, claims, self.records)

    def conditions(self, selection: Selection) -> list[Condition]:
        """Every program's conditions about ``selection``, in precedence order."""
        return [c for p in self.programs for c in p.functions.conditions(selection)]

    @property
    def records(self) -> tuple[str, ...]:
        """Every annotation some program records in ``status.routing``, once each."""
        return tuple(dict.fromkeys(k for p in self.programs for k in p.records))

    def owned_kinds(self) -> tuple[Resource, ...]:
        """Every workload kind some program leaves controlled by the graph, once each."""
        return _unique(k for p in self.programs for k in p.owns)

    def recorded_from_children(
        self, annotations: Mapping[str, str], owned: Iterable[Resource]
    ) -> RecordedRouting | None:
        """Stand-in for a missing ``status.routing``: the one program whose own workload root
        the graph controls and whose kinds cover everything it controls."""
        present = set(owned)
        fits = [p for p in self.programs if p.owns[0] in present and present <= set(p.owns)]
        if len(fits) != 1:
            return None
        return RecordedRouting(fits[0].pathway, recorded(annotations, self.records))

    # -- what the agent reads and writes ----------------------------------------------------
    def watched(self) -> tuple[Watched, ...]:
        """Every watch: the reconcilers' common ones, then each program's."""
        return self.common + tuple(w for p in self.programs for w in p.watches)

    def resources_read(self, pathway: str | None) -> frozenset[str]:
        """The resources (plurals) a reconcile of a graph routed to ``pathway`` reads from the
        caches: the common ones, every program's workload root (cleanup and cutover of another
        pathway's objects look for them whatever the route), and its own program's watches.
        ``None`` (a component): the common ones only. A watch of any other resource that has
        not synced does not hold the key back."""
        out = {w.kind.plural for w in self.common}
        if pathway is not None:
            out |= {p.owns[0].plural for p in self.programs}
            out |= {w.kind.plural for w in self.by_pathway(pathway).watches}
        return frozenset(out)

    def store_kinds(self) -> tuple[Resource, ...]:
        """Every kind the programs read from their caches (``plan`` lists these)."""
        return _unique(w.kind for w in self.watched())

    def group_versions(self) -> tuple[tuple[str, str], ...]:
        """The optional group/versions discovery looks for (served or not): of every kind the
        programs read, and every kind a capability requires."""
        required = (k for c in self.capabilities() for k in c.requires)
        out = _unique(
            k for k in (*self.store_kinds(), *required) if k.api_version not in ALWAYS_SERVED
        )
        return tuple(dict.fromkeys((k.group, k.version) for k in out))

    def rbac(self) -> dict[tuple[str, str], frozenset[str]]:
        """The verbs the agent needs at least per (API group, resource), from the watches: a
        watch lists and watches; a written kind is also applied (PATCH, and create when the
        apply creates) and read back when the cache's copy is stale (``ssa.ownership``). Which
        written kinds it deletes is proven by the chart's recorded run
        (``tests/cluster/test_helm_rights.py``), not declared here."""
        out: dict[tuple[str, str], frozenset[str]] = {}
        for w in self.watched():
            key = (w.kind.group, w.kind.plural)
            out[key] = out.get(key, frozenset()) | frozenset(APPLY if w.write else READ)
        return out

    def written(self) -> tuple[Resource, ...]:
        """Every kind the agent applies (and may delete): the written watches' kinds and every
        program's workload kinds. Each object of them it writes is controlled by one of
        :data:`CONTROLLERS` (the chart's agent guard holds it to that)."""
        return _unique((*(w.kind for w in self.watched() if w.write), *self.owned_kinds()))

    def subresource_writes(self) -> tuple[tuple[Resource, str], ...]:
        """Every (kind, subresource) a field manager of the agent patches: the graph's and the
        components' status, and each program's own (Grove's scale)."""
        by_name = {k.kind: k for k in (*self.store_kinds(), *self.owned_kinds())}
        pairs = (
            (by_name[name], manager.subresource)
            for manager in self.field_managers()
            if manager.subresource
            for name in manager.kinds
        )
        return tuple(dict.fromkeys(pairs))

    def pathway_rules(self) -> dict[str, list[Rule]]:
        """Per program, the chart rules of what only it reads and writes (the common watches'
        rules are the chart's own): its workload kinds (``owns``) applied and deleted (another
        pathway removes them as stale), the rest of its watches read or applied, and the
        subresources its field managers patch (``cli.generate`` writes the chart template)."""
        common = {(w.kind.group, w.kind.plural) for w in self.common}
        out: dict[str, list[Rule]] = {}
        for program in self.programs:
            verbs: dict[tuple[str, str], tuple[str, ...]] = {}
            for w in program.watches:
                verbs[w.kind.group, w.kind.plural] = APPLY if w.write else READ
            for kind in program.owns:
                verbs[kind.group, kind.plural] = WRITE
            by_name = {k.kind: k for k in (*program.owns, *(w.kind for w in program.watches))}
            for manager in program.managers:
                for name in manager.kinds if manager.subresource else ():
                    kind = by_name[name]
                    verbs[kind.group, f"{kind.plural}/{manager.subresource}"] = ("patch",)
            rules = [Rule(g, r, v) for (g, r), v in verbs.items() if (g, r) not in common]
            if rules:
                out[program.pathway] = rules
        return out


# The chart's verb sets: read (the watch caches), apply (server-side apply is PATCH, and
# create when it creates; get reads back a copy the cache proved stale; never PUT), write
# (apply and delete).
READ = ("list", "watch")
APPLY = ("get", "list", "watch", "create", "patch")
WRITE = (*APPLY, "delete")


@dataclass(frozen=True, slots=True)
class Rule:
    """One RBAC rule of the chart's ClusterRole: a resource of one API group, its verbs."""

    group: str
    resource: str
    verbs: tuple[str, ...]


def _claim(program: Program, route: Route) -> Claim:
    """The program's claim; without its capability it takes nothing and says why."""
    capability = program.capability
    if capability is not None and not route.caps.has(capability):
        reason = f"{program.pathway} API is not available"
        return Claim(False, wanted=program.wants(route.annotations), reason=reason)
    return program.functions.claim(route)


def _unique(items: Iterable[Resource]) -> tuple[Resource, ...]:
    return tuple(dict.fromkeys(items))
