"""The agent's schema check of live objects: the offline check's answer, remembered."""

import copy
from pathlib import Path

import yaml

from syncagent.api.schemas import LiveChecks, check_schema

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "agg.yaml"


def graph() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def broken() -> dict:
    doc = graph()
    doc["spec"]["components"][0]["replicas"] = "two"  # a type error
    doc["spec"]["components"][0]["colour"] = "blue"  # an unknown (pruned) field
    return doc


def test_same_findings_as_the_offline_check():
    check_live = LiveChecks().check
    for doc in (graph(), broken()):
        live, offline = check_live(doc), check_schema(doc)
        assert [str(f) for f in live.errors] == [str(f) for f in offline.errors]
        assert live.unknown == offline.unknown
    assert check_live(broken()).errors
    assert check_live(broken()).unknown


def test_a_status_or_metadata_change_reuses_the_answer_and_a_spec_change_does_not():
    check_live = LiveChecks().check
    doc = broken()
    first = check_live(doc)
    later = copy.deepcopy(doc)
    later["metadata"].update(resourceVersion="42", labels={"team": "a"})
    later["status"] = {"state": "pending", "conditions": []}
    assert check_live(later) is first
    later["spec"]["components"][0]["replicas"] = 2
    assert [str(f) for f in check_live(later).errors] == []


def test_the_oldest_answer_goes_past_the_bound():
    checks = LiveChecks(size=1)
    first = checks.check(graph())
    checks.check(broken())
    assert checks.check(graph()) is not first
    assert checks.check(graph()).errors == first.errors
