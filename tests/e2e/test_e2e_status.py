"""``syncagent status -w -o json`` through a Component -> DisaggregatedSet cutover on the real
controllers: a frame shows both generations of workloads at once and which one each Service
selects; the first frame has the Services on the DCDs' Deployments, the last on the
DisaggregatedSet's LeaderWorkerSets, as the server holds them."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import orjson

from tests.e2e.support.observe import DEADLINE, graph_ready, wait_ready
from tests.support.agent import running_agent
from tests.support.graphs import ENABLE_DS, annotate, ds_components, ds_graph
from tests.support.kube import DCD, DGD, DS, controller, names
from tests.support.polling import eventually
from tests.support.signals import with_default_sigint

G = "status-cutover"
ROLES = ("decode", "prefill")


class Frames:
    """The documents of ``syncagent status -w -o json`` (one a line), as they come."""

    def __init__(self, kubeconfig: str, namespace: str) -> None:
        argv = [sys.executable, "-m", "syncagent.cli.main", "status", G, "-w", "-o", "json"]
        # Stopped with ^C below: SIGINT's default disposition, whatever this run inherited.
        self.proc = subprocess.Popen(
            with_default_sigint([*argv, "-n", namespace, "--kubeconfig", kubeconfig]),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.docs: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.docs.append(orjson.loads(line))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(timeout=30) == 130, (
            self.proc.stderr.read() if self.proc.stderr else ""
        )
        self._reader.join(timeout=10)


def _walk(node: dict[str, Any], top: str = "") -> Iterator[tuple[dict[str, Any], str]]:
    """Every node with the child of the program node it hangs under."""
    yield node, top
    for child in node["children"]:
        here = f"{child['kind']}/{child['name']}"
        yield from _walk(child, top or (here if node["kind"] == "Program" else ""))


def _selection(doc: dict[str, Any]) -> dict[str, set[str]]:
    """Per role Service: the program-level objects whose workloads it selects."""
    under = {f"{n['kind']}/{n['name']}": top for n, top in _walk(doc["tree"])}
    return {
        n["name"]: {under[ref] for ref in n["selects"]}
        for n, _ in _walk(doc["tree"])
        if n["kind"] == "Service" and n["name"] in {f"{G}-{r}" for r in ROLES}
    }


def _both_generations(doc: dict[str, Any]) -> bool:
    tops = {top for n, top in _walk(doc["tree"]) if n["kind"] in ("Deployment", "LeaderWorkerSet")}
    return {f"{DCD}/{G}-decode", f"{DS}/{G}"} <= tops


def test_status_follows_a_cutover(control_plane, kube, namespace) -> None:
    kube.create(ds_graph(namespace, G, ds_components()))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, G, what="the Component graph Ready")
        frames = Frames(str(control_plane.kubeconfig), namespace)
        try:
            eventually(lambda: frames.docs, deadline=60, what="the first frame")
            kube.edit_graph(
                namespace,
                G,
                annotate({ENABLE_DS: "true"}),
            )
            eventually(
                lambda: (
                    graph_ready(kube, namespace, G)
                    and names(kube, DCD, namespace) == {f"{G}-frontend"}
                    and frames.docs[-1]["ready"]
                    and not _both_generations(frames.docs[-1])
                    and all(s == {f"{DS}/{G}"} for s in _selection(frames.docs[-1]).values())
                ),
                deadline=DEADLINE,
                what="the cutover to the DS, and its last frame",
            )
        finally:
            frames.stop()
        live = kube.get(DGD, namespace, G)
        uid = kube.get(DS, namespace, G)["metadata"]["uid"]
        controlled = {  # what the server holds under the DS: its LeaderWorkerSets and Services
            f"{kind}/{o['metadata']['name']}"
            for kind in ("LeaderWorkerSet", "Service")
            for o in kube.list(kind, namespace)
            if controller(o).get("uid") == uid
        }

    first, last = frames.docs[0], frames.docs[-1]
    assert _selection(first) == {f"{G}-{r}": {f"{DCD}/{G}-{r}"} for r in ROLES}
    during = [d for d in frames.docs if _both_generations(d)]
    assert during, "no frame showed the DCD workloads and the DisaggregatedSet together"
    for doc in during:
        # Each Service selects a generation throughout the handoff, never none.
        assert all(_selection(doc).values()), _selection(doc)
    program = last["tree"]["children"][0]
    assert program["name"] == live["status"]["routing"]["pathway"]
    [ds] = [c for c in program["children"] if c["kind"] == DS]
    assert {f"{c['kind']}/{c['name']}" for c in ds["children"]} == controlled
    assert any(ref.startswith("LeaderWorkerSet/") for ref in controlled)
