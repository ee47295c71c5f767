"""The built image, unpacked and run the way a kubelet would run the chart's container, with
no container daemon (no tests here).

``skopeo`` (containers/image, the library of Podman and CRI-O) reads the archive; ``umoci``
unpacks it into a runtime bundle, turning the image config into an OCI runtime ``config.json``.
The container is a ``chroot`` in its own mount namespace: the root file system read-only when
the chart asks for it, ``/tmp`` an empty tmpfs, ``/proc`` mounted, and the ServiceAccount token,
CA and namespace where Kubernetes mounts them.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syncagent.devcluster import build, versions

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def run_tool(*cmd: str) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{shlex.join(cmd)}:\n{proc.stderr}"
    return proc.stdout


@dataclass(frozen=True)
class Bundle:
    """An unpacked image: ``rootfs/`` and the runtime ``config.json`` umoci derived."""

    path: Path

    @property
    def rootfs(self) -> Path:
        return self.path / "rootfs"

    @property
    def runtime(self) -> dict[str, Any]:
        return json.loads((self.path / "config.json").read_text())

    def env(self) -> dict[str, str]:
        return dict(e.split("=", 1) for e in self.runtime["process"]["env"])


def unpack(archive: Path, tag: str, into: Path) -> Bundle:
    """``archive`` (an OCI layout in a tar) → an OCI layout folder → a runtime bundle."""
    layout = into / "layout"
    run_tool("skopeo", "copy", "--quiet", f"oci-archive:{archive}", f"oci:{layout}:{tag}")
    bundle = into / "bundle"
    run_tool(umoci(), "unpack", "--image", f"{layout}:{tag}", str(bundle))
    return Bundle(bundle)


def umoci() -> str:
    """The umoci ``packaging/build-image`` built (it has run by the time a test asks)."""
    return str(build.cache_root() / "bin" / f"umoci-{versions.UMOCI}" / "umoci")


@dataclass(frozen=True)
class Pod:
    """What the kubelet would take from the chart's Deployment for the agent container."""

    argv: list[str]
    env: dict[str, str]
    uid: int
    gid: int
    read_only_root: bool
    service_account: dict[str, str]  # file name → content (token, ca.crt, namespace)


class Container:
    """The agent process of :class:`Pod` inside :class:`Bundle`; stderr goes to ``log``."""

    def __init__(self, bundle: Bundle, pod: Pod, *, log: Path) -> None:
        self.log = log
        self._prepare(bundle, pod)
        script = self._mounts(bundle.rootfs, read_only=pod.read_only_root)
        script += (
            f'exec chroot --userspec={pod.uid}:{pod.gid} {shlex.quote(str(bundle.rootfs))} "$@"'
        )
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    "unshare",
                    "--mount",
                    "--propagation",
                    "private",
                    "sh",
                    "-ec",
                    script,
                    "container",
                    *pod.argv,
                ],
                env=pod.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @staticmethod
    def _prepare(bundle: Bundle, pod: Pod) -> None:
        # Like the runtime, create mount points before the root goes read-only.
        secrets = bundle.rootfs / SERVICE_ACCOUNT_DIR.lstrip("/")
        secrets.mkdir(parents=True, exist_ok=True)
        (bundle.rootfs / "proc").mkdir(exist_ok=True)
        source = bundle.path / "serviceaccount"
        source.mkdir(exist_ok=True)
        for name, content in pod.service_account.items():
            (source / name).write_text(content)
            (source / name).chmod(0o644)

    @staticmethod
    def _mounts(rootfs: Path, *, read_only: bool) -> str:
        root = shlex.quote(str(rootfs))
        secrets = shlex.quote(str(rootfs.parent / "serviceaccount"))
        lines = [f"mount --bind {root} {root}"]
        if read_only:
            lines.append(f"mount -o remount,bind,ro {root}")
        lines += [
            f"mount -t tmpfs -o size=64m tmpfs {root}/tmp",
            f"mount -t proc proc {root}/proc",
            f"mount --bind -o ro {secrets} {root}{SERVICE_ACCOUNT_DIR}",
        ]
        return "".join(f"{line}\n" for line in lines)

    def logs(self) -> str:
        return self.log.read_text(errors="replace")

    def status(self) -> dict[str, str]:
        """``/proc/PID/status`` of the agent (the process ``chroot`` became)."""
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)

    def root(self) -> Path:
        return Path(os.readlink(f"/proc/{self.proc.pid}/root"))

    def stop(self, *, grace: float = 30.0) -> int:
        """SIGTERM, as the kubelet sends; SIGKILL after ``grace`` seconds. The exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
