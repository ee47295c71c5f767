"""Field fights: another manager that keeps taking back fields our forced applies set.

Every conflict a non-forced dry run reports is a *take-back*: the other manager holds, with
another value, a field we apply. A forced apply takes it again; a writer that keeps writing it
(an autoscaler, a second controller, a still-running predecessor) would flip it back and forth
for ever. The detector counts take-backs per (object, other manager, path):

- ``threshold`` take-backs within ``window`` seconds declare a fight: the path is *yielded*
  (left out of our desired object) for ``backoff`` seconds instead of forced;
- when the backoff ends, the next conflict on the path is our *reclaim* (it is forced: the
  other manager held the path while we left it alone). If that manager takes it back again
  within ``window``, the fight goes on: yielded again, for twice as long (at most
  ``max_backoff``). Otherwise the fight is over and counting starts afresh.

Yielding only ever follows a conflict, so it omits a path exactly when the other manager holds
it: our apply then neither fights for it nor releases a field nobody else holds (omitting a
field only we own would delete it). A conflict counts as a take-back only when we held the path
since the last one (:meth:`FightDetector.forced` says a forced write took it), so the same
take-back seen twice (a retried write, a second dry run, a stale cache) counts once. The
detector only decides; it writes nothing and knows nothing of what it guards.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from syncagent.ssa.errors import Conflict


@dataclass(frozen=True, slots=True)
class FightPolicy:
    threshold: int = 3
    window: float = 300.0
    backoff: float = 60.0
    max_backoff: float = 3600.0

    def __post_init__(self) -> None:
        if self.threshold < 1:
            raise ValueError(f"fight threshold {self.threshold}: expected at least 1")
        for name in ("window", "backoff", "max_backoff"):
            if getattr(self, name) <= 0:
                raise ValueError(f"fight {name} {getattr(self, name)}: expected a positive value")
        if self.max_backoff < self.backoff:
            raise ValueError(
                f"fight max backoff {self.max_backoff}s is below the backoff {self.backoff}s"
            )


@dataclass(frozen=True, slots=True)
class Fight:
    """A fight declared (or, ``extended``, gone on after a backoff) on some paths of an object."""

    subject: str
    manager: str  # ours
    other: str
    paths: tuple[str, ...]
    takebacks: int
    window: float
    backoff: float
    extended: bool = False

    def describe(self) -> str:
        paths = ", ".join(self.paths)
        if self.extended:
            what = f"took {paths} back again after the agent's backoff"
        else:
            what = f"took {paths} back {self.takebacks} times within {format_duration(self.window)}"
        return (
            f"{self.subject}: field manager {self.other!r} {what}; {self.manager} leaves "
            f"{'them' if len(self.paths) > 1 else 'it'} to {self.other!r} for "
            f"{format_duration(self.backoff)} (the backoff doubles while the fight goes on)"
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with the conflicts of one dry run."""

    yielded: frozenset[str] = frozenset()  # paths to leave out of the desired object
    fights: tuple[Fight, ...] = ()  # declared or extended by this observation
    requeue_after: float | None = None  # when the earliest backoff of the object ends


@dataclass
class _Track:
    """One (object, other manager, path)."""

    takebacks: deque[float] = field(default_factory=deque)
    held: bool = True  # we held the path since the last take-back counted (unknown: yes)
    backoff: float = 0.0  # current backoff; 0 while there is no fight
    until: float = 0.0  # yield until then
    reclaimed: float | None = None  # when we forced it back after the backoff ended
    seen: float = 0.0  # last activity, for forgetting idle tracks


class FightDetector:
    def __init__(
        self, policy: FightPolicy | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy or FightPolicy()
        self._clock = clock
        self._tracks: dict[tuple[str, str, str], _Track] = {}

    def __len__(self) -> int:
        return len(self._tracks)

    def observe(self, subject: str, *, manager: str, conflicts: Iterable[Conflict]) -> Verdict:
        """Judge the conflicts a non-forced dry run of ``subject`` under ``manager`` reported:
        which paths to yield, which fights started."""
        now = self._clock()
        self._forget_idle(now)
        yielded: set[str] = set()
        started: dict[tuple[str, bool], list[str]] = {}
        for conflict in conflicts:
            key = (subject, conflict.manager, conflict.path)
            track = self._tracks.setdefault(key, _Track())
            outcome = self._judge(track, now)
            track.seen = now
            if outcome in ("yield", "declared", "extended"):
                yielded.add(conflict.path)
            if outcome in ("declared", "extended"):
                started.setdefault((conflict.manager, outcome == "extended"), []).append(
                    conflict.path
                )
        fights = tuple(
            self._fight(subject, manager, other, paths, extended)
            for (other, extended), paths in started.items()
        )
        return Verdict(frozenset(yielded), fights, self.requeue_after(subject))

    def forced(self, subject: str, conflicts: Iterable[Conflict]) -> None:
        """A forced write of ``subject`` took these paths: ours again until taken back."""
        for conflict in conflicts:
            track = self._tracks.get((subject, conflict.manager, conflict.path))
            if track is not None:
                track.held = True

    def requeue_after(self, subject: str) -> float | None:
        """Seconds until the earliest active backoff on ``subject`` ends (None: none)."""
        now = self._clock()
        ends = [t.until - now for (s, _, _), t in self._tracks.items() if s == subject]
        active = [e for e in ends if e > 0]
        return min(active) if active else None

    def _judge(self, track: _Track, now: float) -> str:
        if track.backoff and now < track.until:
            return "yield"
        if track.backoff and track.reclaimed is None:
            # The backoff ended: the other manager held the path while we left it alone.
            track.reclaimed, track.held = now, False
            return "force"
        if not track.held:
            return "force"  # the take-back already counted (or the reclaim), seen again
        track.held = False
        if track.backoff and track.reclaimed is not None:
            if now - track.reclaimed <= self.policy.window:
                track.backoff = min(track.backoff * 2, self.policy.max_backoff)
                track.until, track.reclaimed = now + track.backoff, None
                return "extended"
            track.backoff, track.reclaimed = 0.0, None  # the fight is over
        track.takebacks.append(now)
        while track.takebacks and now - track.takebacks[0] > self.policy.window:
            track.takebacks.popleft()
        if len(track.takebacks) < self.policy.threshold:
            return "force"
        track.takebacks.clear()
        track.backoff, track.until = self.policy.backoff, now + self.policy.backoff
        return "declared"

    def _fight(
        self, subject: str, manager: str, other: str, paths: list[str], extended: bool
    ) -> Fight:
        backoff = max(self._tracks[(subject, other, p)].backoff for p in paths)
        return Fight(
            subject=subject,
            manager=manager,
            other=other,
            paths=tuple(sorted(paths)),
            takebacks=self.policy.threshold,
            window=self.policy.window,
            backoff=backoff,
            extended=extended,
        )

    def _forget_idle(self, now: float) -> None:
        """Drop tracks with nothing left to remember (bounded memory over many objects)."""
        horizon = self.policy.window + self.policy.max_backoff
        idle = [k for k, t in self._tracks.items() if now - max(t.seen, t.until) > horizon]
        for key in idle:
            del self._tracks[key]


def format_duration(seconds: float) -> str:
    """``90`` -> ``1m30s``; ``3600`` -> ``1h``."""
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:g}s" if seconds < 10 and seconds != whole else f"{whole}s"
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return "".join(f"{v}{u}" for v, u in ((h, "h"), (m, "m"), (s, "s")) if v)
