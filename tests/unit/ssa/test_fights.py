"""The fight detector (pure, on a fake clock): when a fight is declared, what is yielded, how the
backoff grows while the fight goes on and when it is over."""

from __future__ import annotations

import pytest

from syncagent.ssa import Conflict
from syncagent.ssa.fights import FightDetector, FightPolicy, Verdict, format_duration
from tests.support.clock import HandClock

SUBJECT = "Deployment/demo/g-decode"
OURS = "syncagent/workloads"
REPLICAS = Conflict(".spec.replicas", "hpa-like")


def _detector(**policy: float) -> tuple[FightDetector, HandClock]:
    clock = HandClock(1000.0)
    return FightDetector(FightPolicy(**policy), clock=clock), clock


def _take_back(detector: FightDetector, *conflicts: Conflict) -> tuple[frozenset[str], tuple]:
    """The other manager took ``conflicts`` (default: replicas) back; the agent's dry run sees
    them, and its forced write takes back whatever is not yielded (as the Writer reports)."""
    conflicts = conflicts or (REPLICAS,)
    verdict = detector.observe(SUBJECT, manager=OURS, conflicts=conflicts)
    detector.forced(SUBJECT, [c for c in conflicts if c.path not in verdict.yielded])
    return verdict.yielded, verdict.fights


def test_third_take_back_within_the_window_declares_a_fight_and_yields() -> None:
    detector, clock = _detector()
    for _ in range(2):
        yielded, fights = _take_back(detector)
        assert (yielded, fights) == (frozenset(), ())  # forced: a hand edit is put back
        clock.now += 2
    yielded, fights = _take_back(detector)
    assert yielded == {".spec.replicas"}
    (fight,) = fights
    assert (fight.subject, fight.other, fight.paths, fight.backoff) == (
        SUBJECT,
        "hpa-like",
        (".spec.replicas",),
        60.0,
    )
    assert "'hpa-like' took .spec.replicas back 3 times within 5m" in fight.describe()
    assert f"{OURS} leaves it to 'hpa-like' for 1m" in fight.describe()


def test_take_backs_outside_the_window_do_not_add_up() -> None:
    detector, clock = _detector()
    for _ in range(10):
        assert _take_back(detector) == (frozenset(), ())
        clock.now += 151  # two take-backs at most in any 5 minutes


def test_a_take_back_counts_once_until_a_forced_write_takes_the_path_again() -> None:
    detector, _ = _detector(threshold=2)
    # A second dry run, a retried write or a stale view: no forced write in between.
    for _ in range(3):
        verdict = detector.observe(SUBJECT, manager=OURS, conflicts=(REPLICAS,))
        assert verdict == Verdict()
    detector.forced(SUBJECT, (REPLICAS,))
    verdict = detector.observe(SUBJECT, manager=OURS, conflicts=(REPLICAS,))
    assert verdict.yielded == {".spec.replicas"}


def test_a_reclaim_that_failed_to_write_is_retried_not_counted() -> None:
    detector, clock = _detector(threshold=1, backoff=10)
    assert _take_back(detector)[1]  # declared
    clock.now += 11
    for _ in range(2):  # the reclaim, and its retry: nothing forced in between
        verdict = detector.observe(SUBJECT, manager=OURS, conflicts=(REPLICAS,))
        assert verdict == Verdict()
    detector.forced(SUBJECT, (REPLICAS,))
    clock.now += 2
    _, (fight,) = _take_back(detector)
    assert (fight.extended, fight.backoff) == (True, 20.0)


def test_during_the_backoff_every_conflict_on_the_path_is_yielded_and_requeued() -> None:
    detector, clock = _detector(threshold=1)
    assert _take_back(detector)[1]
    clock.now += 20
    yielded, fights = _take_back(detector)
    assert (yielded, fights) == ({".spec.replicas"}, ())
    assert detector.requeue_after(SUBJECT) == pytest.approx(40.0)
    # Another manager is judged on its own: its first take-back starts its own fight.
    other = Conflict(".spec.replicas", "someone-else")
    _, (fight,) = _take_back(detector, other)
    assert (fight.other, fight.backoff, fight.extended) == ("someone-else", 60.0, False)


def test_the_backoff_doubles_while_the_fight_goes_on_up_to_the_maximum() -> None:
    detector, clock = _detector(threshold=1, backoff=60, max_backoff=150)
    backoffs = [_take_back(detector)[1][0].backoff]
    for _ in range(3):
        clock.now += backoffs[-1] + 1
        assert _take_back(detector) == (frozenset(), ())  # our reclaim is forced
        clock.now += 2
        yielded, (fight,) = _take_back(detector)  # taken back again
        assert yielded == {".spec.replicas"}
        assert fight.extended
        assert "back again after the agent's backoff" in fight.describe()
        backoffs.append(fight.backoff)
    assert backoffs == [60.0, 120.0, 150.0, 150.0]


def test_a_quiet_window_after_the_reclaim_ends_the_fight() -> None:
    detector, clock = _detector(threshold=2, window=300, backoff=60)
    _take_back(detector)
    clock.now += 1
    assert _take_back(detector)[1]  # declared
    clock.now += 61
    assert _take_back(detector) == (frozenset(), ())  # reclaim
    clock.now += 301
    # Long after the reclaim: a new take-back starts counting afresh, no fight yet.
    assert _take_back(detector) == (frozenset(), ())
    clock.now += 1
    _, (fight,) = _take_back(detector)
    assert not fight.extended
    assert fight.backoff == 60.0


def test_idle_tracks_are_forgotten() -> None:
    detector, clock = _detector(threshold=5, window=10, max_backoff=60, backoff=5)
    _take_back(detector)
    clock.now += 1000
    detector.observe("Deployment/demo/other", manager=OURS, conflicts=())
    assert detector._tracks == {}


@pytest.mark.parametrize(
    "policy",
    [
        {"threshold": 0},
        {"window": 0},
        {"backoff": -1},
        {"backoff": 120, "max_backoff": 60},
    ],
)
def test_bad_policies_are_refused(policy: dict) -> None:
    with pytest.raises(ValueError, match="fight"):
        FightPolicy(**policy)


@pytest.mark.parametrize(
    ("seconds", "text"), [(5, "5s"), (2.5, "2.5s"), (60, "1m"), (90, "1m30s"), (3600, "1h")]
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
