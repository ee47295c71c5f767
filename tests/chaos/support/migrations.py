"""R1: the two migrations of a graph between programs, run with the agent killed after write k
(no tests here).

A run starts from scratch in a namespace of its own: the graph is created and brought Ready on
its first program by an agent talking to the server directly; that agent stops; the EndpointSlice
recorder starts; the graph is edited to move it; an agent starts behind :class:`ApiProxy`, which
records its writes and, right after the server answered write ``k`` (before the agent reads the
answer), has the agent SIGKILLed. A new agent then starts and must finish the migration, with no
instant in which a component's Service had no ready endpoint, and a second resync must write
nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.e2e.support.observe import DEADLINE, DS_NAME, EndpointRecorder, graph_ready, wait_ready
from tests.support.agent import Agent, reconciled, running_agent
from tests.support.apiproxy import ApiProxy, Write
from tests.support.graphs import ENABLE_DS, annotate, ds_components, ds_graph
from tests.support.kube import (
    DCD,
    DGD,
    DS,
    PATHS,
    ApiFailure,
    Kube,
    condition,
    controller,
    names,
)
from tests.support.polling import eventually

G = "vllm-disagg"
ROLES = ("decode", "prefill")
SERVICES = [f"{G}-frontend", *(f"{G}-{r}" for r in ROLES)]
# Crash points per migration when $SYNCAGENT_CHAOS_CRASH_POINTS is unset: the first write, the
# middle one and the last (the full sweep does not fit CI's time budget).
CI_CRASH_POINTS = 3
# A Python start under a load of 40 on 2 cores (seen during the full sweep) outlasts the default.
START_DEADLINE = 180.0
MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}


@dataclass(frozen=True)
class Migration:
    name: str
    before: Callable[[str], dict[str, Any]]
    change: Callable[[dict[str, Any]], None]
    done: Callable[[Kube, str], bool]


def _services_selected_by_ds(kube: Kube, ns: str) -> bool:
    graph_uid = (kube.get(DGD, ns, G) or {}).get("metadata", {}).get("uid")
    for role in ROLES:
        svc = kube.get("Service", ns, f"{G}-{role}") or {}
        if controller(svc).get("uid") != graph_uid or DS_NAME not in svc["spec"]["selector"]:
            return False
    return True


def _services_selected_by_dcds(kube: Kube, ns: str) -> bool:
    for role in ROLES:
        dcd = kube.get(DCD, ns, f"{G}-{role}")
        svc = kube.get("Service", ns, f"{G}-{role}") or {}
        if dcd is None or controller(svc).get("uid") != dcd["metadata"]["uid"]:
            return False
        if DS_NAME in svc["spec"]["selector"]:
            return False
    return True


def _reported_on(kube: Kube, ns: str, pathway: str) -> bool:
    """Ready as the agent reports it for the new pathway. An annotation change does not move a
    graph's generation, so the Ready status written before the migration still looks current
    until the agent's first status of the new pathway replaces it."""
    graph = kube.get(DGD, ns, G) or {}
    routed = ((graph.get("status") or {}).get("routing") or {}).get("pathway")
    return routed == pathway and graph_ready(kube, ns, G)


def _cutover_done(kube: Kube, ns: str) -> bool:
    return (
        _reported_on(kube, ns, "DisaggregatedSet")
        and names(kube, DCD, ns) == {f"{G}-frontend"}
        and condition(kube.get(DGD, ns, G), "WorkloadPathway").get("status") == "True"
        and _services_selected_by_ds(kube, ns)
    )


def _fallback_done(kube: Kube, ns: str) -> bool:
    return (
        kube.get(DS, ns, G) is None
        and _reported_on(kube, ns, "Component")
        and _services_selected_by_dcds(kube, ns)
    )


def _enable_ds(graph: dict[str, Any]) -> None:
    graph["metadata"].setdefault("annotations", {})[ENABLE_DS] = "true"


def _disable_ds(graph: dict[str, Any]) -> None:
    graph["metadata"]["annotations"].pop(ENABLE_DS)


CUTOVER = Migration(
    "DCD->DS cutover",
    lambda ns: ds_graph(ns, G, ds_components()),
    _enable_ds,
    _cutover_done,
)
FALLBACK = Migration(
    "DS->DCD fallback",
    lambda ns: ds_graph(ns, G, ds_components(**MODEL), **{ENABLE_DS: "true"}),
    _disable_ds,
    _fallback_done,
)


@dataclass
class Outcome:
    """One run: where the agent was killed, what it wrote, what the recorder saw."""

    crash_at: int | None
    writes: list[Write] = field(default_factory=list)
    killed: bool = False
    violations: list[str] = field(default_factory=list)
    endpoint_events: int = 0
    recorder_problems: list[str] = field(default_factory=list)
    resync_writes: int = -1
    resync_detail: list[Write] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def describe(self) -> str:
        where = "no crash" if self.crash_at is None else f"killed after write {self.crash_at}"
        if self.crash_at is not None and not self.killed:
            where += " (not reached)"
        return (
            f"{where}: {len(self.writes)} writes, {len(self.violations)} serving gaps, "
            f"{len(self.strays)} creates for gone owners{' ' + str(self.strays) if self.strays else ''}, "
            f"second resync {self.resync_writes} writes"
            f"{' ' + '; '.join(map(str, self.resync_detail)) if self.resync_detail else ''}, "
            f"{self.seconds:.0f}s"
        )


def bad(outcome: Outcome | str) -> str | None:
    """Why a run fails R1, or None. A run whose crash point was not reached, or whose
    recorder stopped listening or saw nothing, proved nothing: it fails too."""
    if isinstance(outcome, str):
        return outcome
    problems = list(outcome.recorder_problems)
    if outcome.crash_at is not None and not outcome.killed:
        problems.append(f"crash point {outcome.crash_at} was never reached")
    if outcome.violations or outcome.resync_writes != 0 or outcome.strays or problems:
        return f"{outcome.describe()}; {problems}; first gaps: {outcome.violations[:2]}"
    return None


class Killer:
    """``on_write`` for the proxy: SIGKILL the agent once write ``k`` is answered by the server."""

    def __init__(self, k: int | None) -> None:
        self.k = k
        self.agent: Agent | None = None
        self.killed = threading.Event()
        self._started = threading.Event()

    def attach(self, agent: Agent) -> None:
        self.agent = agent
        self._started.set()

    def __call__(self, index: int, write: Write) -> None:
        if index != self.k:
            return
        # The agent may write before its constructor returned; its process exists by then.
        self._started.wait(timeout=60)
        assert self.agent is not None
        self.agent.kill()
        self.killed.set()


def start_agent(kubeconfig: Any, ns: str, killer: Killer | None = None) -> Agent:
    on_start = None if killer is None else killer.attach
    return Agent(
        kubeconfig,
        "--request-timeout",
        "5s",
        # One ``reconciled`` line per reconcile, with the graph version it read (_resync).
        "--log-level",
        "debug",
        namespace=ns,
        on_start=on_start,
        start_deadline=START_DEADLINE,
    )


@contextlib.contextmanager
def fresh_namespace(kube: Kube) -> Iterator[str]:
    ns = f"chaos-{uuid.uuid4().hex[:8]}"
    kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    try:
        yield ns
    finally:
        kube.request("DELETE", f"/api/v1/namespaces/{ns}")


def run_migration(plane: Any, kube: Kube, migration: Migration, *, crash_at: int | None) -> Outcome:
    outcome = Outcome(crash_at)
    started = time.monotonic()
    with fresh_namespace(kube) as ns:
        kube.create(migration.before(ns))
        with running_agent(plane.kubeconfig, namespace=ns, start_deadline=START_DEADLINE):
            wait_ready(kube, ns, G, what=f"{migration.name}: the graph Ready before the migration")
        with EndpointRecorder(kube, ns, SERVICES) as recorder:
            _migrate(plane, kube, ns, migration, outcome)
        outcome.violations = list(recorder.violations)
        outcome.endpoint_events = recorder.events
        outcome.recorder_problems = recorder.proof_problems()
    outcome.seconds = time.monotonic() - started
    return outcome


def _migrate(plane: Any, kube: Kube, ns: str, migration: Migration, outcome: Outcome) -> None:
    killer = Killer(outcome.crash_at)
    what = f"{migration.name} ({outcome.describe().split(':')[0]})"
    with ApiProxy(plane, on_write=killer) as proxy, contextlib.ExitStack() as agents:
        kube.edit_graph(ns, G, migration.change)
        agent = _owned(agents, start_agent(proxy.kubeconfig, ns, killer))
        if outcome.crash_at is not None:
            eventually(
                lambda: killer.killed.is_set() or migration.done(kube, ns),
                deadline=DEADLINE,
                what=f"{what}: write {outcome.crash_at} or the end of the migration",
            )
            outcome.killed = killer.killed.is_set()
            if outcome.killed:
                agent = _owned(agents, start_agent(proxy.kubeconfig, ns))
        eventually(lambda: migration.done(kube, ns), deadline=DEADLINE, what=f"{what}: done")
        outcome.writes = list(proxy.writes)
        outcome.resync_detail = _second_resync_writes(kube, ns, agent, proxy)
        outcome.resync_writes = len(outcome.resync_detail)
        outcome.strays = stray_creates(kube, ns, outcome.writes)


def _owned(stack: contextlib.ExitStack, agent: Agent) -> Agent:
    stack.callback(agent.discard_log)
    stack.callback(agent.stop)
    return agent


@contextlib.contextmanager
def owned_agent(kubeconfig: Any, ns: str) -> Iterator[Agent]:
    with contextlib.ExitStack() as stack:
        yield _owned(stack, start_agent(kubeconfig, ns))


def reconciled_versions(log: str, key: str) -> list[int]:
    """The graph versions that the DGD reconciles of ``key`` logged as done, in order."""
    return [
        int(e.get("resourceVersion") or 0)
        for e in reconciled(log)
        if e.get("controller") == "dgd" and e.get("key") == key
    ]


def _resync(kube: Kube, ns: str, agent: Agent, n: int) -> None:
    """Touch the graph and wait for the end of the reconcile that read the touch. Another
    reconcile (a component's status waking the graph) may end first; counting that one would
    close the window before the touch's own reconcile and its writes. Versions are compared
    as numbers: etcd's revisions order the writes of this one test cluster."""
    touched = kube.edit_graph(ns, G, annotate({"touch": str(n)}))
    version = int(touched["metadata"]["resourceVersion"])
    try:
        eventually(
            lambda: any(v >= version for v in reconciled_versions(agent.logs(), f"{ns}/{G}")),
            deadline=DEADLINE,
            what=f"the reconcile of touch {n} (graph version {version})",
        )
    except AssertionError as err:
        # Whatever the cause (an agent gone, a key held back, a stuck reconcile), say it here:
        # the loop that runs this tier keeps no other trace unless it keeps logs.
        raise AssertionError(f"{err}\n{_agent_state(agent, f'{ns}/{G}')}") from None


def _agent_state(agent: Agent, key: str) -> str:
    exit_code = agent.proc.poll()
    state = "running" if exit_code is None else f"exited {exit_code}"
    lines = agent.logs().splitlines()
    versions = reconciled_versions(agent.logs(), key)
    last = [line for line in lines if '"reconciled"' not in line][-30:]
    return (
        f"agent {state}; graph versions reconciled {versions[-5:]}; readiness "
        f"{_readyz(agent)}; last non-reconcile log lines:\n  " + "\n  ".join(last)
    )


def _readyz(agent: Agent) -> str:
    """The agent's /readyz answer (it names each watch not synced)."""
    url = f"http://127.0.0.1:{agent.port}/readyz"
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.read().decode(errors="replace").strip()
    except urllib.error.HTTPError as err:
        return f"HTTP {err.code}: {err.read().decode(errors='replace').strip()}"
    except OSError as err:
        return f"unanswered ({err})"


def _second_resync_writes(kube: Kube, ns: str, agent: Agent, proxy: ApiProxy) -> list[Write]:
    _resync(kube, ns, agent, 1)
    before = len(proxy.writes)
    _resync(kube, ns, agent, 2)
    return proxy.writes[before:]


def stray_creates(kube: Kube, ns: str, writes: list[Write]) -> list[str]:
    """Objects the agent created (201) that are gone although it never deleted them, or whose
    owner is gone: created for an owner that was already deleted (garbage collection's work)."""
    strays = []
    for i, write in enumerate(writes):
        if write.status != 201 or write.method != "PATCH":
            continue
        if any(w.method == "DELETE" and w.path == write.path for w in writes[i + 1 :]):
            continue
        try:
            obj = kube.request("GET", write.path)
        except ApiFailure as err:
            if err.code != 404:
                raise
            strays.append(f"{write.path} (removed by someone else)")
            continue
        for ref in obj["metadata"].get("ownerReferences") or ():
            owner = kube.get(ref["kind"], ns, ref["name"]) if ref["kind"] in PATHS else {}
            if owner is None or owner["metadata"]["uid"] != ref["uid"]:
                strays.append(f"{write.path} (owner {ref['kind']} {ref['name']} gone)")
    return strays


def crash_points(recorded: int) -> list[int]:
    """Which writes of the recorded run to crash after, from ``$SYNCAGENT_CHAOS_CRASH_POINTS``:
    ``all`` every one (the full sweep); ``N`` that many, spread evenly from the first to the
    last (unset: CI's bounded subset of 3); ``at:K,L`` exactly those (to reproduce one)."""
    wanted = os.environ.get("SYNCAGENT_CHAOS_CRASH_POINTS", str(CI_CRASH_POINTS)).strip()
    every = list(range(1, recorded + 1))
    if wanted.startswith("at:"):
        return [int(k) for k in wanted[3:].split(",") if k.strip()]
    if wanted == "all" or int(wanted) >= recorded:
        return every
    n = max(1, int(wanted))
    if n == 1:
        return [every[-1]]
    return sorted({every[round(i * (recorded - 1) / (n - 1))] for i in range(n)})
