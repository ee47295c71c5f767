"""Composing successive dry runs of one object (the plan engine's view for the programs)."""

from __future__ import annotations

import copy

from syncagent.inspect.planengine import compose


def _obj(**meta: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "d", "managedFields": [], **meta},
        "spec": {"selector": {"a": "1"}},
    }


def _mf(manager: str, fields: dict) -> dict:
    return {"manager": manager, "operation": "Apply", "fieldsV1": fields}


def test_each_dry_run_contributes_what_it_changed() -> None:
    live = _obj()
    ref = {"uid": "u", "controller": True}
    ownership = copy.deepcopy(live)
    ownership["metadata"]["ownerReferences"] = [ref]
    ownership["metadata"]["managedFields"] = [_mf("syncagent/ownership", {"f:metadata": {}})]
    content = copy.deepcopy(live)
    content["spec"]["selector"] = {"a": "2"}
    content["metadata"]["managedFields"] = [_mf("syncagent/services", {"f:spec": {}})]
    step1 = compose(None, live, ownership)
    step2 = compose(step1, live, content)
    assert step2["metadata"]["ownerReferences"] == [ref]
    assert step2["spec"]["selector"] == {"a": "2"}
    assert {e["manager"] for e in step2["metadata"]["managedFields"]} == {
        "syncagent/ownership",
        "syncagent/services",
    }


def test_a_later_dry_run_does_not_undo_an_earlier_one() -> None:
    live = _obj(labels={"x": "1"})
    first = copy.deepcopy(live)
    first["metadata"]["labels"] = {"x": "2"}
    second = copy.deepcopy(live)  # says nothing about labels: same as live
    assert compose(compose(None, live, first), live, second)["metadata"]["labels"] == {"x": "2"}


def test_absent_object_keeps_the_first_create() -> None:
    created = _obj(uid="u1")
    skeleton = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "d", "uid": "u2", "managedFields": [_mf("o", {})]},
    }
    out = compose(compose(None, None, created), None, skeleton)
    assert out["metadata"]["uid"] == "u1"
    assert out["spec"] == created["spec"]
    assert [e["manager"] for e in out["metadata"]["managedFields"]] == ["o"]


def test_plan_engine_compares_with_the_object_before_a_takeover() -> None:
    import httpx2

    from syncagent.inspect.planengine import PlanEngine

    engine = PlanEngine(httpx2.AsyncClient(base_url="https://127.0.0.1:1"))
    before = _obj(resourceVersion="1", managedFields=[_mf("kubectl-edit", {"f:spec": {}})])
    after = _obj(resourceVersion="1", managedFields=[_mf("syncagent/services", {"f:spec": {}})])
    engine.observe_takeover(before, after)
    engine.observe_takeover(after, after)  # a later view never replaces the real one
    assert engine.records.real["Service/d/s"] == before
    assert engine.records.order == ["Service/d/s"]
    # Dry runs come from the engine's own verbs: nothing rewrites the client's requests.
    assert engine.dry_run
    assert engine.api.http.event_hooks["request"] == [engine.counter.hook]
