"""Go's time.ParseDuration, the format of metav1.Duration (Go's time/format.go)."""

from __future__ import annotations

import pytest

from syncagent.api.operatorconfig.goduration import parse_go_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15m", 900.0),
        ("30s", 30.0),
        ("1h30m", 5400.0),
        ("0", 0.0),
        ("-1s", -1.0),
        ("1.5s", 1.5),
        ("500ms", 0.5),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["15", "", "1d", "m", 30, "1h 30m"])
def test_what_go_refuses(value: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_go_duration(value)
