"""The agent as a subprocess, and what it serves (no tests here).

:func:`running_agent` runs ``syncagent run`` against a test control plane for the length of a
``with`` block: the test decides when the agent starts, stops, is killed or restarted, so it is
a context manager rather than a fixture. :class:`Metrics` reads one scrape of ``/metrics``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import yaml

from syncagent.devcluster.procs import die_with_parent
from tests.support import testlogs
from tests.support.polling import eventually

WRITE_VERBS = ("create", "patch", "update", "delete")


def parse_metrics(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$", line)
        if not match:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        out[(match.group(1), labels)] = float(match.group(3))
    return out


def reconciled(log: str) -> list[dict[str, Any]]:
    """Every ``reconciled`` line of an agent's JSON log (``--log-level debug``), in order."""
    return [orjson.loads(line) for line in log.splitlines() if '"reconciled"' in line]


class Metrics:
    """One scrape of ``/metrics``."""

    def __init__(self, text: str) -> None:
        self.samples = parse_metrics(text)

    def sum(self, name: str, **match: str) -> float:
        want = set(match.items())
        return sum(v for (n, labels), v in self.samples.items() if n == name and want <= labels)

    def requests(
        self,
        *,
        verbs: tuple[str, ...] | None = None,
        resource: str | None = None,
        dry_run: str | None = None,
        exclude: tuple[str, ...] = (),
    ) -> float:
        total = 0.0
        for (n, labels), v in self.samples.items():
            if n != "syncagent_api_requests_total":
                continue
            d = dict(labels)
            if verbs is not None and d.get("verb") not in verbs:
                continue
            if resource is not None and d.get("resource") != resource:
                continue
            if dry_run is not None and d.get("dry_run") != dry_run:
                continue
            if d.get("resource") in exclude:
                continue
            total += v
        return total

    def writes(
        self, *, resource: str | None = None, exclude: tuple[str, ...] = ("leases", "events")
    ) -> float:
        """Real (not dry-run) writes, Lease renewals and Events left out by default."""
        return self.requests(verbs=WRITE_VERBS, resource=resource, dry_run="false", exclude=exclude)


class Agent:
    """``syncagent run`` in a subprocess, JSON logs to a file, metrics on a free port."""

    def __init__(
        self,
        kubeconfig: Path | str,
        *args: str,
        namespace: str | None = None,
        leader_elect: bool = False,
        on_start: Callable[[Agent], None] | None = None,
        start_deadline: float = 30.0,
        launcher: tuple[str, ...] = ("-m", "syncagent.cli.main"),
    ) -> None:
        """``on_start`` runs once the process exists, before the agent serves /metrics (a
        fault proxy that kills the agent may need it that early). ``launcher``: what the
        interpreter runs (a bench wraps the agent to trace its memory)."""
        self.log, self._keep_log = testlogs.agent_log()
        cmd = [
            sys.executable,
            *launcher,
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--capability",
            "grove=false",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "0",
        ]
        if namespace:
            cmd += ["--namespace", namespace]
        if not leader_elect:
            cmd.append("--no-leader-elect")
        cmd += list(args)
        self._stderr = self.log.open("wb")
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=die_with_parent,  # an interrupted run leaves no agent behind
        )
        if on_start is not None:
            on_start(self)
        self.port = eventually(
            self._port, deadline=start_deadline, what="the agent to serve /metrics"
        )

    def _port(self) -> int | None:
        if self.proc.poll() is not None:
            raise AssertionError(
                f"agent exited with {self.proc.returncode}:\n{self.logs()[-4000:]}"
            )
        for line in self.logs().splitlines():
            if '"msg":"serving metrics' in line:
                return int(orjson.loads(line)["address"].rsplit(":", 1)[1])
        return None

    def logs(self) -> str:
        return self.log.read_text(errors="replace")

    def scrape(self) -> Metrics:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            return Metrics(r.read().decode())

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def dgd_reconciles(self) -> float:
        """Graph reconciles so far: a test waits for the count to pass what it read before."""
        return self.scrape().sum("syncagent_reconcile_total", controller="dgd")

    def is_leader(self) -> bool:
        return self.scrape().sum("syncagent_leader") == 1

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def discard_log(self) -> None:
        """Remove the log, unless the run keeps logs (``$SYNCAGENT_TEST_LOGS``)."""
        if not self._keep_log:
            self.log.unlink(missing_ok=True)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._stderr.close()


@contextlib.contextmanager
def running_agent(kubeconfig: Path | str, *args: str, **kw: Any) -> Iterator[Agent]:
    agent = Agent(kubeconfig, *args, **kw)
    try:
        yield agent
    finally:
        agent.stop()
        agent.discard_log()


def kubeconfig_via(kubeconfig: Path, server: str) -> Path:
    """A copy of ``kubeconfig`` whose clusters point at ``server``."""
    config = yaml.safe_load(kubeconfig.read_text())
    for cluster in config.get("clusters") or []:
        cluster["cluster"]["server"] = server
    out = Path(tempfile.mkstemp(prefix="kubeconfig-", suffix=".yaml")[1])
    out.write_text(yaml.safe_dump(config))
    return out
