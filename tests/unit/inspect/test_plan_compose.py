"""Composing successive dry runs of one object (the plan engine's view for the programs)."""

from __future__ import annotations

import copy

from syncagent.inspect.planapplier import compose


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


def test_plan_applier_compares_with_the_object_before_a_takeover() -> None:
    import httpx2

    from syncagent.inspect.planapplier import PlanApplier
    from syncagent.ssa import Engine

    engine = Engine(httpx2.AsyncClient(base_url="https://127.0.0.1:1"))
    applier = PlanApplier(engine)
    before = _obj(resourceVersion="1", managedFields=[_mf("kubectl-edit", {"f:spec": {}})])
    after = _obj(resourceVersion="1", managedFields=[_mf("syncagent/services", {"f:spec": {}})])
    applier.observe_takeover(before, after)
    applier.observe_takeover(after, after)  # a later view never replaces the real one
    assert applier.records.real["Service/d/s"] == before
    assert applier.records.order == ["Service/d/s"]
    # Dry runs are the applier's own requests: nothing rewrites the client's requests.
    assert engine.api.http.event_hooks["request"] == [engine.counter.hook]


def _deployment(image: str, replicas: int) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n", "managedFields": []},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "main", "image": image}]}},
        },
    }


def test_two_writes_to_one_part_both_show() -> None:
    # Issue 14 item 6: one dry run changes the image, another the replicas; each is dry-run
    # against the real object, so each result repeats the other's old value.
    live = _deployment("img:1", 1)
    image = compose(None, live, _deployment("img:2", 1))
    both = compose(image, live, _deployment("img:1", 3))
    assert both["spec"]["replicas"] == 3
    assert both["spec"]["template"]["spec"]["containers"][0]["image"] == "img:2"
    # and the other order
    both = compose(compose(None, live, _deployment("img:1", 3)), live, _deployment("img:2", 1))
    assert both["spec"] == _deployment("img:2", 3)["spec"]


def test_a_field_one_write_removes_stays_removed() -> None:
    live = _deployment("img:1", 1)
    dropped = _deployment("img:1", 1)
    del dropped["spec"]["replicas"]
    out = compose(compose(None, live, dropped), live, _deployment("img:2", 1))
    assert "replicas" not in out["spec"]
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "img:2"


def test_a_part_one_write_removes_is_absent_not_a_placeholder() -> None:
    live = _deployment("img:1", 1)
    live["spec"]["paused"] = True
    out = compose(compose(None, live, live), live, _deployment("img:1", 1))
    assert "paused" not in out["spec"]
    assert out["spec"] == _deployment("img:1", 1)["spec"]
