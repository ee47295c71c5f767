"""The restart state machine (spec/lifecycle.md §2 acceptance examples)."""

from __future__ import annotations

from syncagent.api import Restart
from syncagent.programs.restart import plan_restart

COMPONENTS = ["Frontend", "decode", "prefill"]


def seq(restart_id: str, order: list[str] | None = None) -> Restart:
    strategy: dict = {"type": "Sequential"}
    if order:
        strategy["order"] = order
    return Restart.model_validate({"id": restart_id, "strategy": strategy})


def never(_: str) -> bool:
    return False


def test_new_sequential_restart_starts_with_the_first_name_in_byte_order():
    plan = plan_restart(seq("r1"), None, COMPONENTS, done=never)
    assert plan.status == {"observedID": "r1", "phase": "Restarting", "inProgress": ["Frontend"]}
    assert plan.annotate == {"Frontend"}


def test_sequential_moves_on_when_the_current_component_is_done():
    state = {"observedID": "r1", "phase": "Restarting", "inProgress": ["Frontend"]}
    plan = plan_restart(seq("r1"), state, COMPONENTS, done=lambda c: c == "Frontend")
    assert plan.status["inProgress"] == ["decode"]
    assert plan.annotate == {"Frontend", "decode"}  # prefill keeps its old value


def test_sequential_stays_while_the_current_component_rolls():
    state = {"observedID": "r1", "phase": "Restarting", "inProgress": ["decode"]}
    plan = plan_restart(seq("r1"), state, COMPONENTS, done=lambda c: c == "Frontend")
    assert plan.status["inProgress"] == ["decode"]


def test_sequential_completes_after_the_last_component():
    state = {"observedID": "r1", "phase": "Restarting", "inProgress": ["prefill"]}
    plan = plan_restart(seq("r1"), state, COMPONENTS, done=lambda c: True)
    assert plan.status == {"observedID": "r1", "phase": "Completed", "inProgress": []}
    assert plan.annotate == set(COMPONENTS)


def test_sequential_follows_the_given_order():
    plan = plan_restart(seq("r1", ["prefill", "decode", "Frontend"]), None, COMPONENTS, done=never)
    assert plan.status["inProgress"] == ["prefill"]
    assert plan.annotate == {"prefill"}


def test_parallel_restarts_everything_then_completes():
    spec = Restart.model_validate({"id": "r1", "strategy": {"type": "Parallel"}})
    plan = plan_restart(spec, None, COMPONENTS, done=lambda c: True)
    assert plan.status == {
        "observedID": "r1",
        "phase": "Restarting",
        "inProgress": ["Frontend", "decode", "prefill"],
    }
    assert plan.annotate == set(COMPONENTS)
    half = plan_restart(spec, plan.status, COMPONENTS, done=lambda c: c != "decode")
    assert half.status["inProgress"] == ["decode"]
    done = plan_restart(spec, half.status, COMPONENTS, done=lambda c: True)
    assert done.status["phase"] == "Completed"


def test_completed_restart_is_left_alone():
    state = {"observedID": "r1", "phase": "Completed", "inProgress": []}
    plan = plan_restart(seq("r1"), state, COMPONENTS, done=never)
    assert plan.status == state
    assert plan.annotate == set(COMPONENTS)


def test_removed_restart_keeps_a_terminal_status_and_clears_others():
    completed = {"observedID": "r1", "phase": "Completed", "inProgress": []}
    assert plan_restart(None, completed, COMPONENTS, done=never).status == completed
    running = {"observedID": "r1", "phase": "Restarting", "inProgress": ["decode"]}
    cleared = plan_restart(None, running, COMPONENTS, done=never)
    assert cleared.status is None
    assert cleared.annotate == set()


def test_a_new_id_supersedes_a_running_restart():
    state = {"observedID": "r1", "phase": "Restarting", "inProgress": ["decode"]}
    plan = plan_restart(seq("r2"), state, COMPONENTS, done=lambda c: True)
    assert plan.status == {"observedID": "r2", "phase": "Restarting", "inProgress": ["Frontend"]}
