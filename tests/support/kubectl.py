"""The real ``kubectl`` for the cluster tests (no tests here), and a second writer built on it.

The binary is ``kubectl`` v<pinned Kubernetes> built from the pinned module, from the same cache
as the control plane (``syncagent.devcluster.build.ensure_binaries``), never whatever ``kubectl``
the machine has. Every foreign write in the coexistence tests goes through it, so the field
managers, operations and patch types are exactly what users' kubectl produces (``kubectl-label``,
``kubectl-annotate``, ``kubectl-patch``, ``kubectl-edit``, ``kubectl`` on ``/scale``, ``kubectl``
for ``apply --server-side``...).

:class:`Fighter` is a second server-side-apply writer: ``kubectl apply --server-side
--force-conflicts`` of one field, every ``period`` seconds, in a thread (an HPA, a KEDA scaler or a
still-running old operator would do the same). :class:`FieldWatch` records every value a field
takes on one object, from a watch stream, so a test can count the flips.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from tests.support.kube import Kube
from tests.support.polling import eventually

RUN_TIMEOUT = 60.0


class Kubectl:
    """``kubectl --kubeconfig <control plane> -n <namespace> ...``, failing loudly."""

    def __init__(self, binary: Path, kubeconfig: Path, namespace: str) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self.namespace = namespace

    def __call__(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> str:
        cmd = [str(self.binary), "--kubeconfig", str(self.kubeconfig), "-n", self.namespace, *args]
        done = subprocess.run(
            cmd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            env={**os.environ, **(env or {})},
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{shlex.join(cmd)} exited {done.returncode}: {done.stderr.strip() or done.stdout}"
            )
        return done.stdout

    def label(self, target: str, *pairs: str) -> str:
        return self("label", target, *pairs)

    def annotate(self, target: str, *pairs: str) -> str:
        return self("annotate", target, *pairs)

    def patch(self, target: str, patch: Any, *, type: str = "merge") -> str:
        return self("patch", target, f"--type={type}", "-p", orjson.dumps(patch).decode())

    def add_owner(self, target: str, owner: dict[str, Any]) -> str:
        """A non-controller owner reference to ``owner`` (a live object) appended with a JSON
        patch: what a user runs to hang an object on a backup or cost object."""
        meta = owner["metadata"]
        item = {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": meta["name"],
            "uid": meta["uid"],
        }
        return self.patch(
            target,
            [{"op": "add", "path": "/metadata/ownerReferences/-", "value": item}],
            type="json",
        )

    def scale(self, target: str, replicas: int) -> str:
        return self("scale", target, f"--replicas={replicas}")

    def edit(self, target: str, sed_expression: str) -> str:
        """``kubectl edit`` with ``sed -i`` as the editor: a real edit session, no terminal."""
        editor = f"sed -i -e {shlex.quote(sed_expression)}"
        return self("edit", target, env={"KUBE_EDITOR": editor, "EDITOR": editor})

    def apply_server_side(self, obj: dict[str, Any], *, manager: str, force: bool = True) -> str:
        args = ["apply", "--server-side", f"--field-manager={manager}", "-f", "-"]
        if force:
            args.append("--force-conflicts")
        return self(*args, stdin=yaml.safe_dump(obj))


@dataclass
class Fighter:
    """Forces ``patch`` (a sparse object) with ``kubectl apply --server-side`` every ``period``
    seconds until stopped; counts its applies."""

    kubectl: Kubectl
    patch: dict[str, Any]
    manager: str
    period: float = 2.0
    applies: int = 0
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Fighter:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=RUN_TIMEOUT + self.period)
            assert not self._thread.is_alive(), "the fighter did not stop"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.kubectl.apply_server_side(self.patch, manager=self.manager)
                self.applies += 1
            except AssertionError as err:
                self.errors.append(str(err))
            # The fighter's own pace: what is measured is how the agent reacts to it.
            self._stop.wait(self.period)

    def wait_applies(self, count: int, *, deadline: float) -> None:
        """Block until the fighter has applied ``count`` more times."""
        target = self.applies + count
        eventually(
            lambda: self.applies >= target,
            deadline=deadline,
            what=f"the fighter to apply {target} times in all",
        )


@dataclass(frozen=True)
class Observation:
    at: float  # time.monotonic()
    resource_version: str
    value: Any


class FieldWatch:
    """Records each value ``read(obj)`` takes on one object, from a watch stream (thread)."""

    def __init__(
        self, kube: Kube, kind: str, ns: str, name: str, read: Callable[[dict[str, Any]], Any]
    ) -> None:
        self.kube, self.kind, self.ns, self.name, self.read = kube, kind, ns, name, read
        self.seen: list[Observation] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> FieldWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=30)  # the server ends each watch within 5 s
        assert not self._thread.is_alive(), "the field watch did not stop"

    def values(self, since: float = 0.0, until: float = float("inf")) -> list[Any]:
        """The values in order, consecutive repeats folded (one entry per change)."""
        with self._lock:
            picked = [o.value for o in self.seen if since <= o.at < until]
        return [v for i, v in enumerate(picked) if i == 0 or v != picked[i - 1]]

    def changes(self, to: Any, *, since: float = 0.0, until: float = float("inf")) -> int:
        """How many times the value changed to ``to`` in that interval."""
        with self._lock:
            seen = [o.value for o in self.seen if o.at < until]
            times = [o.at for o in self.seen if o.at < until]
        return sum(
            1
            for i in range(1, len(seen))
            if seen[i] == to and seen[i - 1] != to and times[i] >= since
        )

    def _watch(self) -> None:
        own = self.kube.separate()
        try:
            while not self._stop.is_set():
                self._stream(own)
        finally:
            own.http.close()

    def _stream(self, kube: Kube) -> None:
        path = kube.path(self.kind, self.ns)
        params = {
            "watch": "1",
            "fieldSelector": f"metadata.name={self.name}",
            "timeoutSeconds": "5",
        }
        try:
            with kube.http.stream("GET", path, params=params) as response:
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line:
                        self._record(orjson.loads(line))
        except Exception:
            if self._stop.is_set():
                return

    def _record(self, event: dict[str, Any]) -> None:
        obj = event.get("object") or {}
        if event.get("type") not in ("ADDED", "MODIFIED"):
            return
        rv = str((obj.get("metadata") or {}).get("resourceVersion"))
        with self._lock:
            self.seen.append(Observation(time.monotonic(), rv, self.read(obj)))
