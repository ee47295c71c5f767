"""Write conflicts retried without being reported (docs/retries.md): the first few in a row."""

from syncagent.controller.reconcilers import QUIET_CONFLICTS, quiet_conflict


def test_the_first_conflicts_in_a_row_are_quiet_then_reported_until_another_outcome():
    streaks: dict = {}
    slot = ("dcd", "ns/a")
    quiet = [quiet_conflict(streaks, slot, conflict=True) for _ in range(QUIET_CONFLICTS + 2)]
    assert quiet == [True] * QUIET_CONFLICTS + [False, False]
    # another key keeps its own count
    assert quiet_conflict(streaks, ("dcd", "ns/b"), conflict=True)
    # any other outcome starts the count again, and forgets the key
    assert not quiet_conflict(streaks, slot, conflict=False)
    assert slot not in streaks
    assert quiet_conflict(streaks, slot, conflict=True)
