"""Capabilities: which optional APIs the agent may use, from discovery and ``--capability``.

Pure: no I/O. The runtime's discovery feeds :func:`resolve` (through :func:`resolver`) with what
the API server serves; every command folds its ``--capability NAME=auto|true|false`` values with
:func:`capability_overrides`, so the spelling is the same everywhere (docs/routing.md §1).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from syncagent.kube import kinds
from syncagent.rest.resource import Resource

GROVE = "grove"
LWS = "lws"
DISAGGREGATED_SET = "disaggregatedSet"
NAMES: tuple[str, ...] = (GROVE, LWS, DISAGGREGATED_SET)

PODCLIQUESETS = kinds.POD_CLIQUE_SET
PODCLIQUES = kinds.POD_CLIQUE
PODCLIQUESCALINGGROUPS = kinds.POD_CLIQUE_SCALING_GROUP
LEADERWORKERSETS = kinds.LEADER_WORKER_SET
DISAGGREGATEDSETS = kinds.DISAGGREGATED_SET
DYNAMOCHECKPOINTS = kinds.CHECKPOINT

# What each pathway capability needs served, in the order the "is required" error names them.
REQUIRES: Mapping[str, tuple[Resource, ...]] = {
    GROVE: (PODCLIQUESETS,),
    LWS: (LEADERWORKERSETS,),
    DISAGGREGATED_SET: (DISAGGREGATEDSETS, LEADERWORKERSETS),
}


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
    """One snapshot: the pathway capabilities after configuration, the ``…API`` ones without."""

    grove: bool
    lws: bool
    disaggregated_set: bool
    grove_api: bool
    disaggregated_set_api: bool
    checkpoint_api: bool
    served: frozenset[Resource] = frozenset()

    def serves(self, resource: Resource) -> bool:
        return resource in self.served

    def as_dict(self) -> dict[str, bool]:
        return {
            GROVE: self.grove,
            LWS: self.lws,
            DISAGGREGATED_SET: self.disaggregated_set,
            "groveAPI": self.grove_api,
            "disaggregatedSetAPI": self.disaggregated_set_api,
            "checkpointAPI": self.checkpoint_api,
        }


def capability_overrides(
    pairs: Iterable[tuple[str, Setting]] | None, *, offline: bool = False
) -> dict[str, Setting]:
    """Fold repeated ``--capability`` values (the last one wins) into a full setting per name.

    Online commands default to ``auto``; offline ones (``render``, ``convert``) read no cluster,
    so ``auto`` means nothing there: they default to ``true`` and reject ``auto``.
    """
    default = Setting.TRUE if offline else Setting.AUTO
    settings = dict.fromkeys(NAMES, default)
    given: dict[str, Setting] = {}
    for name, setting in pairs or ():
        if offline and setting is Setting.AUTO:
            raise ValueError(
                f"--capability {name}=auto: this command reads no cluster; use true or false"
            )
        settings[name] = given[name] = setting
    if given.get(LWS) is Setting.FALSE and given.get(DISAGGREGATED_SET) is Setting.TRUE:
        raise ValueError(
            "--capability disaggregatedSet=true needs LeaderWorkerSets but lws=false switches "
            "them off; drop one of the two"
        )
    return settings


def _detected(served: frozenset[Resource], name: str) -> bool:
    return all(gvr in served for gvr in REQUIRES[name])


def _resolve_one(served: frozenset[Resource], name: str, setting: Setting, *, strict: bool) -> bool:
    if setting is Setting.FALSE:
        return False
    if setting is Setting.AUTO:
        return _detected(served, name)
    missing = [gvr for gvr in REQUIRES[name] if gvr not in served]
    if missing and strict:
        raise CapabilityRequiredError(name, missing[0])
    # A required capability stays on even when a later refresh misses it: re-routing graphs
    # away from a pathway the operator declared present would delete working workloads.
    return True


def resolve(
    served: Iterable[Resource],
    settings: Mapping[str, Setting],
    *,
    strict: bool = True,
) -> Capabilities:
    """Capabilities for what the server serves under ``settings``.

    ``strict`` raises :class:`CapabilityRequiredError` for a ``true`` capability that is not
    served (at start); refreshes pass ``strict=False``.
    """
    served_set = frozenset(served)
    values = {
        name: _resolve_one(served_set, name, settings.get(name, Setting.AUTO), strict=strict)
        for name in NAMES
    }
    return Capabilities(
        grove=values[GROVE],
        lws=values[LWS],
        disaggregated_set=values[DISAGGREGATED_SET] and values[LWS],
        grove_api=PODCLIQUESETS in served_set,
        disaggregated_set_api=DISAGGREGATEDSETS in served_set,
        checkpoint_api=DYNAMOCHECKPOINTS in served_set,
        served=served_set,
    )


def offline(settings: Mapping[str, Setting]) -> Capabilities:
    """Capabilities of commands that read no cluster: everything not switched off."""
    on = {name: settings.get(name, Setting.TRUE) is not Setting.FALSE for name in NAMES}
    return Capabilities(
        grove=on[GROVE],
        lws=on[LWS],
        disaggregated_set=on[DISAGGREGATED_SET] and on[LWS],
        grove_api=on[GROVE],
        disaggregated_set_api=on[DISAGGREGATED_SET],
        checkpoint_api=True,
    )


def resolver(
    settings: Mapping[str, Setting],
) -> Callable[[frozenset[Resource], bool], Capabilities]:
    """What the runtime's discovery calls with the served resources (and ``strict``)."""
    return lambda served, strict: resolve(served, settings, strict=strict)
