"""Metrics are declared beside what they measure (docs/runtime.md §4), yet a freshly wired agent
lists every family docs/ names before its first sample: the composition root declares them all."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2

from syncagent.cli.pathways import PROGRAMS
from syncagent.controller import ControllerSettings, setup
from syncagent.runtime.client import http_for
from syncagent.runtime.manager import Manager, ManagerOptions
from syncagent.runtime.metrics import Metrics
from tests.support.fakeapi import offline_config

DOCS = Path(__file__).resolve().parents[3] / "docs"


def documented_families() -> set[str]:
    names = {n for doc in DOCS.glob("*.md") for n in re.findall(r"syncagent_\w+", doc.read_text())}
    # A histogram's series are its family's name with a suffix.
    return {re.sub(r"_(bucket|count|sum)$", "", n) for n in names}


def offline_client() -> httpx2.AsyncClient:
    # Never contacted: wiring the controllers sends no request.
    return http_for(offline_config("https://127.0.0.1:1"), timeout=httpx2.Timeout(10.0))


def test_a_wired_agent_lists_every_documented_family_before_any_work() -> None:
    client = offline_client()
    manager = Manager(client, ManagerOptions(), metrics=Metrics())
    setup(manager, client, ControllerSettings(), programs=PROGRAMS)
    text = manager.metrics.render()
    listed = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    assert documented_families() - listed == set()
    assert "syncagent_apply_actions_total" in listed  # the programs' families too
