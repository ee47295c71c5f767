"""Capabilities: which optional APIs the agent may use, from discovery and ``--capability``.

Pure: no I/O. A capability is declared where it is used: a pathway's in its program declaration
(``Program.capability``), the one the reconcilers of every pathway use here (:data:`COMMON`);
the registry lists them all (``Registry.capabilities``) and the composition root passes that
list in. The runtime's discovery feeds :func:`resolve` (through :func:`resolver`) with what the
API server serves; every command folds its ``--capability NAME=auto|true|false`` values with
:func:`capability_overrides`, so the spelling is the same everywhere (docs/routing.md §1).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from syncagent.kube import kinds
from syncagent.rest.resource import Resource


@dataclass(frozen=True, slots=True)
class Capability:
    """An optional API, switched by ``--capability NAME=auto|true|false``.

    ``requires``: the kinds the API server must serve, in the order the "is required" error
    names them. ``needs``: capabilities that must be on too (switching one of them off switches
    this one off). ``api``: also report ``<name>API``, whether its first kind is served whatever
    the setting (the ``syncagent_capability`` metric and the log).
    """

    name: str
    requires: tuple[Resource, ...]
    needs: tuple[Capability, ...] = ()
    api: bool = False


# Multinode components: the DCD reconciler renders their LeaderWorkerSets whatever the pathway.
LWS = Capability("lws", (kinds.LEADER_WORKER_SET,))
COMMON: tuple[Capability, ...] = (LWS,)
# Reported as ``checkpointAPI`` (checkpoint readiness, docs/api.md §2); never configured.
CHECKPOINT_API = "checkpoint"


class Setting(enum.Enum):
    AUTO = "auto"
    TRUE = "true"
    FALSE = "false"


class CapabilityRequiredError(Exception):
    """A capability set to ``true`` whose API is not served; the agent refuses to start."""

    def __init__(self, name: str, missing: Resource) -> None:
        super().__init__(f'capability "{name}" is required but {missing.gvr} is not served')
        self.name = name
        self.missing = missing


@dataclass(frozen=True)
class Capabilities:
    """One snapshot: each declared capability after configuration (``enabled``), and the
    ``…API`` ones (``apis``: served, whatever the configuration)."""

    enabled: Mapping[str, bool]
    apis: Mapping[str, bool] = field(default_factory=dict)
    served: frozenset[Resource] = frozenset()

    def has(self, capability: Capability) -> bool:
        return self.enabled.get(capability.name, False)

    def serves(self, resource: Resource) -> bool:
        return resource in self.served

    def as_dict(self) -> dict[str, bool]:
        return {**self.enabled, **{f"{name}API": on for name, on in self.apis.items()}}


def capability_overrides(
    pairs: Iterable[tuple[str, Setting]] | None,
    *,
    declared: Sequence[Capability],
    offline: bool = False,
) -> dict[str, Setting]:
    """Fold repeated ``--capability`` values (the last one wins) into a full setting per
    declared capability.

    Online commands default to ``auto``; offline ones (``render``, ``convert``) read no cluster,
    so ``auto`` means nothing there: they default to ``true`` and reject ``auto``.
    """
    default = Setting.TRUE if offline else Setting.AUTO
    settings = {c.name: default for c in declared}
    given: dict[str, Setting] = {}
    for name, setting in pairs or ():
        if offline and setting is Setting.AUTO:
            raise ValueError(
                f"--capability {name}=auto: this command reads no cluster; use true or false"
            )
        settings[name] = given[name] = setting
    for capability in declared:
        for need in capability.needs:
            if given.get(need.name) is Setting.FALSE and given.get(capability.name) is Setting.TRUE:
                raise ValueError(
                    f"--capability {capability.name}=true needs {need.name} but "
                    f"{need.name}=false switches it off; drop one of the two"
                )
    return settings


def _resolve_one(
    served: frozenset[Resource],
    capability: Capability,
    setting: Setting,
    *,
    strict: bool,
) -> bool:
    if setting is Setting.FALSE:
        return False
    missing = [gvr for gvr in capability.requires if gvr not in served]
    if setting is Setting.AUTO:
        return not missing
    if missing and strict:
        raise CapabilityRequiredError(capability.name, missing[0])
    # A required capability stays on even when a later refresh misses it: re-routing graphs
    # away from a pathway the operator declared present would delete working workloads.
    return True


def _with_needs(
    declared: Sequence[Capability], on: Callable[[Capability], bool]
) -> dict[str, bool]:
    """Each capability's value, off when one it needs is off (``declared`` lists what a
    capability needs before it: ``Registry.capabilities``)."""
    out: dict[str, bool] = {}
    for capability in declared:
        out[capability.name] = on(capability) and all(out.get(n.name) for n in capability.needs)
    return out


def resolve(
    served: Iterable[Resource],
    settings: Mapping[str, Setting],
    *,
    declared: Sequence[Capability],
    strict: bool = True,
) -> Capabilities:
    """Capabilities for what the server serves under ``settings``.

    ``strict`` raises :class:`CapabilityRequiredError` for a ``true`` capability that is not
    served (at start); refreshes pass ``strict=False``.
    """
    served_set = frozenset(served)

    def on(capability: Capability) -> bool:
        setting = settings.get(capability.name, Setting.AUTO)
        return _resolve_one(served_set, capability, setting, strict=strict)

    apis = {c.name: c.requires[0] in served_set for c in declared if c.api}
    apis[CHECKPOINT_API] = kinds.CHECKPOINT in served_set
    return Capabilities(_with_needs(declared, on), apis, served_set)


def offline(settings: Mapping[str, Setting], *, declared: Sequence[Capability]) -> Capabilities:
    """Capabilities of commands that read no cluster: everything not switched off."""

    def on(capability: Capability) -> bool:
        return settings.get(capability.name, Setting.TRUE) is not Setting.FALSE

    apis = {c.name: on(c) for c in declared if c.api}
    apis[CHECKPOINT_API] = True
    return Capabilities(_with_needs(declared, on), apis)


def resolver(
    settings: Mapping[str, Setting], *, declared: Sequence[Capability]
) -> Callable[[frozenset[Resource], bool], Capabilities]:
    """What the runtime's discovery calls with the served resources (and ``strict``)."""
    return lambda served, strict: resolve(served, settings, declared=declared, strict=strict)
