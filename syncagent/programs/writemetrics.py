"""The series of the programs' writes (``writes.py``) and of the fight detector (``fights.py``).

Declared here, beside what they count, on the registry the composition root owns
(``runtime.metrics.Metrics.of``); the names, labels and help are the ones docs/runtime.md lists.
"""

from __future__ import annotations

from syncagent.runtime.metrics import Registry


class ApplyMetrics:
    """What the programs' applies did."""

    def __init__(self, r: Registry) -> None:
        self.apply_actions = r.counter(
            "syncagent_apply_actions_total",
            "Server-side apply outcomes by kind and result "
            "(created, configured, unchanged, conflict, error).",
            ("kind", "result"),
        )
        self.conflicts = r.counter(
            "syncagent_apply_conflicts_total",
            "Apply conflicts with another field manager, by kind and that manager (its name when "
            "it is one of ours or well known, else other).",
            ("kind", "manager"),
        )
        self.create_fallback = r.gauge(
            "syncagent_create_read_first",
            "1 while creates read before they write, because admission refused the create-only "
            "write at the start-up check (docs/write-protocol.md section 4); 0 once it passed.",
        )
        self.yielded = r.counter(
            "syncagent_apply_yielded_total",
            "Conflicting fields left out of an apply during a fight's backoff, by kind and the "
            "field manager holding them (its name when it is one of ours or well known, else other).",
            ("kind", "manager"),
        )


class FightMetrics:
    """The field fights the detector declared."""

    def __init__(self, r: Registry) -> None:
        self.field_fights = r.counter(
            "syncagent_field_fights_total",
            "Field fights: another field manager kept taking back fields the agent applies, so "
            "the agent left them to it for a backoff (declared, or gone on after a backoff), "
            "by kind and that manager (its name when it is one of ours or well known, else other).",
            ("kind", "manager"),
        )
