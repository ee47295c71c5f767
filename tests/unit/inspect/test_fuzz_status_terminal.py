"""``syncagent status`` prints no escape sequences or terminal-affecting characters from the
cluster (issue 41, item 5; docs/bad-input.md).

Hypothesis draws hostile strings (CSI, OSC 8/52, DCS and their 8-bit forms, bare C0/C1 controls,
bidi overrides, line separators, mixed with text) and puts them wherever the cluster chooses a
string: an object's name, a condition's reason and message, an Event's type, reason and
message, a field manager and its operation. Each output mode (text, json, yaml) is printed and
must hold none of them. On main the text and yaml modes printed ESC and bidi controls as they
came, and json kept C1 controls and bidi overrides, which JSON does not escape.
"""

from __future__ import annotations

import contextlib
import io
import json
import unicodedata
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from syncagent.cli.status import cleantext
from syncagent.cli.status.show import View
from tests.support import figures
from tests.unit.support.statustree import NOW, conditions, live_object

TABLE = "status terminal-text fuzz (unit tier)"
FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
HOSTILE = [
    "\x1b[2J\x1b[H",  # clear the screen, cursor home
    "\x1b]0;owned\x07",  # window title
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",  # hyperlink
    "\x1b]52;c;ZWNobyBoaQ==\x07",  # clipboard write
    "\x1bP+q544e\x1b\\",  # DCS
    "\x9b31m",  # 8-bit CSI
    "\x9d0;t\x9c",  # 8-bit OSC
    "\x1b(0",  # character set
    "\x1b",
    "\x9b",
    "\u202e",  # right-to-left override
    "\u2066\u2069",
    "\u200f",
    "\r",
    "\b",
    "\x00",
    "\x7f",
    "\u2028",
]
hostile_text = st.lists(
    st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6)), min_size=1, max_size=6
).map("".join)
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on rather than show (newline ends a line)."""
    return [
        c
        for c in text
        if c != "\n"
        and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI or c in "\u2028\u2029")
    ]


def objects(s: dict[str, str]) -> list[dict[str, Any]]:
    graph = live_object(
        "DynamoGraphDeployment",
        "g",
        status={
            "routing": {"pathway": s["pathway"]},
            **conditions("Ready", "False", s["reason"], s["message"]),
        },
    )
    graph["metadata"]["managedFields"] = [{"manager": s["manager"], "operation": s["operation"]}]
    dcd = live_object(
        "DynamoComponentDeployment",
        s["name"],
        owner=graph,
        status=conditions("Available", "False", s["reason"], s["message"]),
    )
    event = {
        "kind": "Event",
        "involvedObject": {"uid": dcd["metadata"]["uid"]},
        "type": s["type"],
        "reason": s["event_reason"],
        "message": s["event_message"],
        "count": 2,
        "lastTimestamp": (NOW - timedelta(seconds=5)).isoformat().replace("+00:00", "Z"),
    }
    return [graph, dcd, event]


FIELDS = (
    "pathway",
    "reason",
    "message",
    "manager",
    "operation",
    "name",
    "type",
    "event_reason",
    "event_message",
)


def strings_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *strings_of(v)]]
    if isinstance(value, list):
        return [s for v in value for s in strings_of(v)]
    return []


def printed(view: View, objs: list[dict[str, Any]]) -> str:
    root = view.tree(objs)
    assert root is not None
    out = io.StringIO()
    console = Console(file=out, highlight=False, width=4096, force_terminal=False)
    with contextlib.redirect_stdout(out):
        view.print(root, console)
    return out.getvalue()


@FUZZ
@given(strings=st.fixed_dictionaries({f: hostile_text for f in FIELDS}))
def test_status_prints_no_control_sequence_in_any_output_mode(strings: dict[str, str]):
    objs = objects(strings)
    for mode in ("text", "json", "yaml"):
        view = View("g", "ns", window=timedelta(minutes=15), output=mode)
        text = printed(view, objs)
        assert unsafe(text) == [], (mode, text)
        if mode == "json":
            # JSON escapes C0 controls itself (\u001b): the decoded strings must be clean too.
            assert [c for v in strings_of(json.loads(text)) for c in unsafe(v)] == [], text
    figures.count(TABLE, "trees printed in text, json and yaml")


@given(text=st.text())
def test_clean_leaves_no_unsafe_character_and_keeps_ordinary_text(text: str):
    out = cleantext.clean(text)
    assert unsafe(out) == []
    assert "\n" not in out
    if not unsafe(text) and "\x1b" not in text:
        assert out == text.replace("\n", " ")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("pull \x1b[31mfailed\x1b[0m", "pull failed"),
        ("see \x1b]8;;https://evil.example/\x1b\\here\x1b]8;;\x1b\\", "see here"),
        ("title\x1b]0;owned\x07 set", "title set"),
        ("a\u202eb\u2066c", "abc"),
        ("8-bit \x9b2Jcsi", "8-bit csi"),
        ("two\nlines\ttab", "two lines tab"),
        ("Grüße, 日本語 ✔", "Grüße, 日本語 ✔"),
    ],
)
def test_clean_removes_whole_sequences_and_keeps_the_text_around_them(raw: str, shown: str):
    assert cleantext.clean(raw) == shown
