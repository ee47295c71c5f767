"""Both appliers implement the one protocol the programs write through (ssa/applier.py), with
the protocol's parameters, and neither carries a dry-run switch."""

from __future__ import annotations

import inspect

import pytest

from syncagent.inspect.planapplier import PlanApplier
from syncagent.ssa import ApplyOptions, Engine
from syncagent.ssa.applier import Applier

VERBS = sorted(
    name for name, member in vars(Applier).items() if inspect.iscoroutinefunction(member)
)


def test_the_protocol_names_the_verbs_the_programs_use() -> None:
    assert {"apply", "preview", "delete", "patch", "view_for_create", "owner_alive"} <= set(VERBS)


@pytest.mark.parametrize("applier", [Engine, PlanApplier])
@pytest.mark.parametrize("verb", VERBS)
def test_each_applier_has_the_verb_with_the_protocols_parameters(applier: type, verb: str) -> None:
    declared = inspect.signature(getattr(Applier, verb)).parameters
    implemented = inspect.signature(getattr(applier, verb)).parameters
    assert [(p.name, p.kind, p.default) for p in implemented.values()] == [
        (p.name, p.kind, p.default) for p in declared.values()
    ]


@pytest.mark.parametrize("applier", [Engine, PlanApplier])
def test_no_applier_is_switched_by_a_dry_run_flag(applier: type) -> None:
    assert "dry_run" not in inspect.signature(applier.__init__).parameters
    assert "dry_run" not in ApplyOptions.__dataclass_fields__
    for verb in VERBS:
        assert "dry_run" not in inspect.signature(getattr(applier, verb)).parameters


def test_the_plan_applier_is_no_engine() -> None:
    # It wraps one for its reads; it does not override the engine's verbs.
    assert not issubclass(PlanApplier, Engine)
