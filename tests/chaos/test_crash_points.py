"""R1 crash points: the agent SIGKILLed right after each of its writes during a DCD->DS cutover
and a DS->DCD fallback, on the real DisaggregatedSet/LWS controller (Grove is not served).

The write sequence is not written down here: a first run records it through the proxy, and the
crash points are derived from it, so the sweep follows any change of the sequence. By default
(CI) three points per migration run, spread from the first write to the last; the full sweep is
``SYNCAGENT_CHAOS_CRASH_POINTS=all python3 -m pytest tests/chaos -k crash``, and
``SYNCAGENT_CHAOS_CRASH_POINTS=at:2,6`` reruns chosen points.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.chaos.support.migrations import (
    CUTOVER,
    FALLBACK,
    G,
    Migration,
    Outcome,
    bad,
    crash_points,
    run_migration,
)
from tests.support.writecounts import summary

# New runs for a crash point past the end of a run (each aims at the last write of the run before).
REPLACEMENTS = 3


def _parallel() -> int:
    return max(1, int(os.environ.get("SYNCAGENT_CHAOS_PARALLEL", "2")))


def _sweep(plane, kube, migration: Migration, points: list[int]) -> list[Outcome | str]:
    def run(k: int) -> Outcome | str:
        own = kube.separate()
        try:
            return run_migration(plane, own, migration, crash_at=k)
        except AssertionError as err:
            return f"killed after write {k}: {err}"
        finally:
            own.http.close()

    def one(k: int) -> Outcome | str:
        outcome = run(k)
        # A run may write less than the recorded one (co-owners of the model Service retry
        # their joins a varying number of times): a point past its last write is replaced by
        # that last write, in a new run, which may write less again.
        for _ in range(REPLACEMENTS):
            if not isinstance(outcome, Outcome) or outcome.killed:
                break
            if not 0 < len(outcome.writes) < outcome.crash_at:
                break
            outcome = run(len(outcome.writes))
        return outcome

    with ThreadPoolExecutor(max_workers=_parallel()) as pool:
        return list(pool.map(one, points))


# Every wait inside has its own deadline; the full sweep (dozens of runs) outlasts the default.
@pytest.mark.timeout(4 * 3600)
@pytest.mark.parametrize("migration", [CUTOVER, FALLBACK], ids=["cutover", "fallback"])
def test_killed_after_any_write_the_agent_finishes_without_a_serving_gap(
    control_plane, kube, figures, migration
):
    recorded = run_migration(control_plane, kube, migration, crash_at=None)
    figures.add(f"R1 {migration.name}: recorded run {recorded.describe()}")
    figures.add(f"R1 {migration.name}: recorded run {summary(recorded.writes, G)}")
    for i, write in enumerate(recorded.writes, 1):
        figures.add(f"R1 {migration.name}:   write {i}: {write}")
    assert recorded.writes, "the migration made no write"
    assert bad(recorded) is None, bad(recorded)
    points = crash_points(len(recorded.writes))
    outcomes = _sweep(control_plane, kube, migration, points)
    for outcome in outcomes:
        figures.add(
            f"R1 {migration.name}:   {outcome if isinstance(outcome, str) else outcome.describe()}"
        )
    done = [o for o in outcomes if isinstance(o, Outcome)]
    gaps = sum(len(o.violations) for o in done)
    figures.add(
        f"R1 {migration.name}: {len(recorded.writes)} writes -> {len(points)} crash points run "
        f"({sum(o.killed for o in done)} reached), serving gaps {gaps}, "
        f"second-resync writes {sum(max(0, o.resync_writes) for o in done)}, "
        f"creates for gone owners {sum(len(o.strays) for o in done)}, "
        f"failed runs {sum(isinstance(o, str) for o in outcomes)}"
    )
    failures = [b for b in map(bad, outcomes) if b]
    assert not failures, failures
