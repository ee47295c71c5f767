"""The chaos tier's R1 verdict cannot pass a run that proved nothing (no cluster here).

Each case is an outcome the old verdict passed: a crash point the run never reached (the
agent was never killed), and a run whose EndpointSlice recorder stopped listening or saw
nothing. The second resync's wait reads the agent's ``reconciled`` lines by graph version.
"""

from __future__ import annotations

import orjson
import pytest

from tests.chaos.support.migrations import Outcome, bad, reconciled_versions


def _clean(**kw: object) -> Outcome:
    return Outcome(**{"crash_at": 2, "killed": True, "resync_writes": 0, **kw})  # type: ignore[arg-type]


def test_a_clean_run_passes() -> None:
    assert bad(_clean()) is None
    assert bad(_clean(crash_at=None, killed=False)) is None


@pytest.mark.parametrize(
    ("outcome", "why"),
    [
        (_clean(killed=False), "crash point 2 was never reached"),
        (_clean(recorder_problems=["the recorder stopped listening: HTTP 410"]), "HTTP 410"),
        (_clean(recorder_problems=["saw no EndpointSlice change"]), "saw no EndpointSlice"),
        (_clean(resync_writes=1), "second resync 1 writes"),
        (_clean(violations=["Service x has no ready endpoint"]), "1 serving gaps"),
    ],
    ids=["not-reached", "recorder-died", "recorder-saw-nothing", "resync-write", "gap"],
)
def test_a_run_that_proved_nothing_or_failed_fails(outcome: Outcome, why: str) -> None:
    verdict = bad(outcome)
    assert verdict is not None
    assert why in verdict


def _line(**fields: object) -> str:
    return orjson.dumps({"message": "reconciled", **fields}).decode()


def test_the_second_resync_reads_the_graph_versions_of_its_own_reconciles() -> None:
    log = "\n".join(
        [
            _line(controller="dgd", key="ns/g", result="success", resourceVersion="7"),
            _line(controller="dcd", key="ns/g-decode", result="success"),
            _line(controller="dgd", key="ns/other", result="success", resourceVersion="9"),
            '{"message": "applied", "key": "ns/g"}',
            _line(controller="dgd", key="ns/g", result="requeue", resourceVersion="12"),
        ]
    )
    assert reconciled_versions(log, "ns/g") == [7, 12]
